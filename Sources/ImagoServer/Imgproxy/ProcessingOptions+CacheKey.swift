import Foundation

extension ProcessingOptions {
    /// A canonical spelling of every field that changes the answer's
    /// bytes: equal exactly when those fields are, however the URL spelled
    /// them (short or long names, presets, order, repeats). The fields
    /// that change only the answer's header fields (file name,
    /// attachment, expiry) and the presets' names are left out.
    public var cacheKey: String {
        let defaults = ProcessingOptions()
        var key = ""
        func add<Value: Equatable>(_ name: String, _ value: Value, _ defaultValue: Value, _ text: @autoclosure () -> String) {
            guard value != defaultValue else { return }
            key += name + "=" + text() + ";"
        }
        add("rt", resizingType, defaults.resizingType, resizingType.rawValue)
        add("w", width, defaults.width, "\(width)")
        add("h", height, defaults.height, "\(height)")
        add("mw", minWidth, defaults.minWidth, "\(minWidth)")
        add("mh", minHeight, defaults.minHeight, "\(minHeight)")
        add("z", [zoomWidth, zoomHeight], [defaults.zoomWidth, defaults.zoomHeight], "\(zoomWidth):\(zoomHeight)")
        add("dpr", dpr, defaults.dpr, "\(dpr)")
        add("el", enlarge, defaults.enlarge, "1")
        add("ex", extend, defaults.extend, "\(extend.isEnabled ? 1 : 0):\(extend.gravity)")
        add("exar", extendAspectRatio, defaults.extendAspectRatio, "\(extendAspectRatio.isEnabled ? 1 : 0):\(extendAspectRatio.gravity)")
        add("g", gravity, defaults.gravity, "\(gravity)")
        add("c", crop, defaults.crop, "\(crop.width):\(crop.height):\(crop.gravity.map(\.description) ?? "")")
        add(
            "t", trim, defaults.trim,
            "\(trim.isEnabled ? 1 : 0):\(trim.threshold):\(trim.color.map(\.description) ?? ""):\(trim.equalHorizontal):\(trim.equalVertical)")
        add("pd", padding, defaults.padding, "\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)")
        add("ar", autoRotate, defaults.autoRotate, "0")
        add("rot", rotate, defaults.rotate, "\(rotate)")
        add("fl", [flipHorizontal, flipVertical], [defaults.flipHorizontal, defaults.flipVertical], "\(flipHorizontal):\(flipVertical)")
        add("flat", flatten, defaults.flatten, "1")
        add("bg", background, defaults.background, "\(background)")
        add("bl", blur, defaults.blur, "\(blur)")
        add("sh", sharpen, defaults.sharpen, "\(sharpen)")
        add("pix", pixelate, defaults.pixelate, "\(pixelate)")
        add("wm", watermark, defaults.watermark, "\(watermark.isEnabled):\(watermark.opacity):\(watermark.position):\(watermark.scale)")
        add("q", quality, defaults.quality, "\(quality)")
        add("fq", formatQuality, defaults.formatQuality, formatQuality.map { "\($0.key.rawValue):\($0.value)" }.sorted().joined(separator: ":"))
        add("mb", maxBytes, defaults.maxBytes, "\(maxBytes)")
        add("f", format, defaults.format, format.rawValue)
        add("sm", stripMetadata, defaults.stripMetadata, "0")
        add("kcr", keepCopyright, defaults.keepCopyright, "0")
        add("scp", stripColorProfile, defaults.stripColorProfile, "0")
        add("eth", enforceThumbnail, defaults.enforceThumbnail, "1")
        add("pg", page, defaults.page, "\(page)")
        add("skp", skipProcessing, defaults.skipProcessing, skipProcessing.map(\.rawValue).sorted().joined(separator: ":"))
        add("raw", raw, defaults.raw, "1")
        // Escaped, so that no cache buster can spell other fields.
        add(
            "cb", cacheBuster, defaults.cacheBuster, cacheBuster.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ";", with: "%3B")
        )
        add("limits", sourceLimits, defaults.sourceLimits, "\(sourceLimits)")
        add("imago_gray", grayscale, defaults.grayscale, grayscaleWeights == .rec601 ? "1:601" : "1")
        add("imago_radius", cornerRadius, defaults.cornerRadius, "\(cornerRadius)")
        for kind in Effect.Kind.allCases { if let effect = adjustments[kind] { key += "\(effect);" } }
        return key
    }
}
