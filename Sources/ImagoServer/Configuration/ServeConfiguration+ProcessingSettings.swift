import ImagoCaching

extension ServeConfiguration {
    /// The settings of what URLs may ask for: presets, qualities, limits,
    /// the watermark.
    static let processingSettings: [Setting] = [
        Setting(
            flag: "preset", variable: "IMAGO_PRESETS", valueName: "NAME=OPTIONS",
            summary: "Options that pr:NAME stands for, as imgproxy's IMGPROXY_PRESETS (thumb=rs:fill:64:48/q:70); 'default' applies to every URL",
            isRepeatable: true, listSeparator: ",", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in configuration.service.presets = try Presets(lines: values) }
        ),
        switchSetting("only-presets", "URLs name presets only: /SIGNATURE/PRESET:PRESET/SOURCE", \.service.presetsOnly),
        switchSetting(
            "allow-source-limits", "Let URLs lower the source limits for their source (msr, msfs, maf, mafr, mrd)", \.service.allowsSourceLimits),
        number("quality", "1-100", "The quality answers are encoded at when the URL names none", \.service.quality, scale: 1, default: nil),
        Setting(
            flag: "format-quality", variable: "IMAGO_FORMAT_QUALITY", valueName: "FORMAT=QUALITY",
            summary: "The quality for one format, over --quality (webp=79)", isRepeatable: true, listSeparator: ",",
            defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in
                configuration.service.formatQuality = [:]
                for text in values {
                    let halves = text.split(separator: "=")
                    guard halves.count == 2, let format = ProcessingOptions.Format(name: halves[0]), let quality = Int(halves[1]) else {
                        throw ConfigurationError("expected FORMAT=QUALITY")
                    }
                    configuration.service.formatQuality[format] = quality
                }
            }
        ),
        count("max-result-dimension", "Pixels an answer's longest side may have; larger ones are scaled down", \.service.maximumResultDimension),
        Setting(
            flag: "watermark-path", variable: "IMAGO_WATERMARK_PATH", valueName: "FILE", summary: "The image the wm option draws",
            isRepeatable: false, listSeparator: ",", defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in configuration.service.watermark = values.last.map { .file($0) } }
        ),
        Setting(
            flag: "watermark-url", variable: "IMAGO_WATERMARK_URL", valueName: "URL",
            summary: "The image the wm option draws, fetched under the source policy", isRepeatable: false, listSeparator: ",",
            defaultText: { _ in "none" },
            apply: { values, configuration throws(ConfigurationError) in configuration.service.watermark = values.last.map { .url($0) } }
        ),
        Setting(
            flag: "watermark-opacity", variable: "IMAGO_WATERMARK_OPACITY", valueName: "0-1", summary: "A factor on every watermark's opacity",
            isRepeatable: false, listSeparator: ",", defaultText: { _ in "1" },
            apply: { values, configuration throws(ConfigurationError) in
                guard let text = values.last, let opacity = Double(text), (0...1).contains(opacity) else {
                    throw ConfigurationError("expected 0 to 1")
                }
                configuration.service.watermarkOpacity = opacity
            }
        ),
    ]
}
