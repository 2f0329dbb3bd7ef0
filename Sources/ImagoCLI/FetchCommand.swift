import ArgumentParser
import Foundation
import Imago

/// `imago fetch URL...`: load real images through a pipeline with a disk cache.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images by URL through the pipeline and print one line per URL.",
        discussion: """
            With --headers, the bytes are loaded as they are (any status, not decoded) and each answer's \
            fields are printed below its line: a stored answer's show what the cache kept and its Age.
            Exits with 1 if any URL failed, 2 if the cache folder cannot be used.
            """
    )

    @Argument(help: "The image URLs to load.")
    var urls: [String]

    @OptionGroup var folder: CacheCommand.Folder

    @Option(help: "Decode to cover this many pixels on the longer side (0: full size).")
    var size = 0

    @Option(help: "How to use the cache: use (HTTP rules), reload, offline (cache only), revalidate.")
    var network: NetworkOption = .use

    @Flag(help: "Load the bytes without decoding them and print the status and fields of each answer.")
    var headers = false

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request field, as \"Name: value\" (repeatable).")
    var requestFields: [String] = []

    /// The request fields given with --header.
    private var fields: HTTPFields {
        get throws {
            var fields = HTTPFields()
            for line in requestFields {
                guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else {
                    throw ValidationError("--header \"\(line)\" is not \"Name: value\"")
                }
                fields.append(HTTPField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            return fields
        }
    }

    enum NetworkOption: String, ExpressibleByArgument, CaseIterable {
        case use, reload, offline, revalidate

        var policy: ImageRequest.NetworkPolicy {
            switch self {
            case .use: .useCache
            case .reload: .reload
            case .offline: .cacheOnly
            case .revalidate: .revalidate
            }
        }
    }

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        guard size >= 0 else { throw ValidationError("--size cannot be negative") }
        _ = try fields
    }

    func run() async throws {
        let disk = try folder.open()
        defer { disk.close() }
        let pipeline = ImagePipeline(configuration: .init(dataCache: disk))
        let progress = ProgressBar(label: "fetching", total: urls.count)
        let targetSize = size > 0 ? ImageSize(width: size, height: size) : nil
        let fields = try fields

        let lines = await withTaskGroup(of: (Int, String, Bool).self) { group in
            for (index, string) in urls.enumerated() {
                group.addTask {
                    defer { progress.advance() }
                    guard let url = URL(string: string), url.scheme != nil else {
                        return (index, "\(string)  invalid URL", false)
                    }
                    do {
                        let request = ImageRequest(url: url, headers: fields, networkPolicy: network.policy, targetSize: targetSize)
                        if headers { return (index, Self.describeData(string, try await pipeline.data(for: request)), true) }
                        let response = try await pipeline.image(for: request)
                        let image = response.image
                        let bytes = response.dataCount.map { formatBytes($0) } ?? "-"
                        let source = "\(response.source)" + Self.describe(response.freshness)
                        return (
                            index,
                            "\(string)  \(image.width)x\(image.height) \(image.pixelFormat)  \(bytes)  from \(source)  \(format(response.timings.total, in: .milliseconds)) ms",
                            true
                        )
                    } catch {
                        return (index, "\(string)  \(error)", false)
                    }
                }
            }
            var lines: [(Int, String, Bool)] = []
            for await line in group { lines.append(line) }
            return lines.sorted { $0.0 < $1.0 }
        }
        // Entries served stale-while-revalidate are refreshed in the background:
        // give those refreshes time to land before the process exits.
        if !(await pipeline.waitForBackgroundRefreshes(timeout: .seconds(10))) {
            Terminal.error("a background refresh did not finish within 10 s and was cancelled")
        }
        for (_, line, succeeded) in lines {
            if succeeded { print(line) } else { Terminal.error(line) }
        }
        if lines.contains(where: { !$0.2 }) { throw ExitCode(ExitStatus.partialFailure) }
    }

    /// The answer's line (status, size, source) and its fields, one per line.
    static func describeData(_ url: String, _ response: DataResponse) -> String {
        let source = "\(response.source)" + describe(response.freshness)
        let fields = response.headers.map { "  \($0.name): \($0.value)" }
        return (["\(url)  \(response.statusCode)  \(formatBytes(response.data.count))  from \(source)"] + fields).joined(separator: "\n")
    }

    /// " (revalidated)", " (stale: ...)", or nothing for a fresh image.
    static func describe(_ freshness: ImageResponse.Freshness) -> String {
        switch freshness {
        case .fresh: ""
        case .revalidated: " (revalidated: 304)"
        case .stale(.revalidatingInBackground): " (stale, refreshing in the background)"
        case .stale(.networkFailed(let error)): " (stale: \(error))"
        case .stale(.cacheOnly): " (stale, offline)"
        case .stale(.acceptedByRequest): " (stale, accepted by the request's max-stale)"
        }
    }
}

/// A unit durations are printed in.
enum DurationUnit: Double {
    case milliseconds = 1e3
    case microseconds = 1e6
}

/// A duration in `unit`, with one decimal.
func format(_ duration: Duration, in unit: DurationUnit) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.1f", (Double(seconds) + Double(attoseconds) * 1e-18) * unit.rawValue)
}
