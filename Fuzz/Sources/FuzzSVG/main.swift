import DecoderFuzzing
import Foundation
import ImagoCodecs

/// libFuzzer's entry point: one input through `SVGSanitizer` (for a
/// browser and for librsvg), its output checked, then through `SVGDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSVG(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    for embeddedImages in [SVGSanitizer.EmbeddedImages.all, .raster] {
        checkSanitizer(SVGSanitizer(embeddedImages: embeddedImages), data)
    }
    return DecoderFuzzing.run(decoder, bytes, count)
}

/// Renders on the fuzzer's thread, without a time limit: a render's
/// thread ends after the input, which the leak check would take for a
/// leak, and a document slow in ways the counts do not catch is worth
/// seeing as a timeout.
let decoder = SVGDecoder(limits: .init(renderCPUTimeLimit: nil))

/// What the sanitiser writes is sanitised already (a second pass changes
/// nothing), and holds only allowed elements and no event handler,
/// `xml:base` or `src`. A thrown ``ImageDecodingError`` is the expected
/// answer to a document it does not read.
func checkSanitizer(_ sanitizer: SVGSanitizer, _ data: Data) {
    guard let output = try? sanitizer.sanitize(data) else { return }
    guard let again = try? sanitizer.sanitize(output) else { fatalError("invariant broken: the sanitiser refuses its own output") }
    check(again == output, "a second pass changed the output")
    let bytes = [UInt8](output)
    var index = 0
    while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
        index = open + 1
        guard index < bytes.count, bytes[index] != UInt8(ascii: "/") else { continue }
        if bytes[index] == UInt8(ascii: "?") {
            check(open == 0, "a processing instruction past the declaration")
            continue
        }
        let nameEnd = bytes[index...].firstIndex { $0 == 0x20 || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "/") } ?? bytes.count
        let name = localName(bytes[index..<nameEnd])
        check(SVGSanitizer.allowedElements.contains(name), "the element <\(name)> is written")
        let tagEnd = bytes[index...].firstIndex(of: UInt8(ascii: ">")) ?? bytes.count
        // Attribute values are quoted with `"` and hold no `"`: every ` name="` is an attribute.
        var cursor = nameEnd
        while let equals = bytes[cursor..<tagEnd].firstIndex(of: UInt8(ascii: "=")) {
            let start = (bytes[cursor..<equals].lastIndex(of: 0x20) ?? cursor) + 1
            let attribute = localName(bytes[start..<equals]).lowercased()
            check(!attribute.hasPrefix("on") && attribute != "base" && attribute != "src", "the attribute \(attribute) is written")
            guard let close = bytes[(equals + 2)..<tagEnd].firstIndex(of: UInt8(ascii: "\"")) else { break }
            cursor = close + 1
        }
        index = tagEnd
    }
}

/// The part of a name after its prefix.
func localName(_ bytes: ArraySlice<UInt8>) -> String {
    let name = String(decoding: bytes, as: UTF8.self)
    return name.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? name
}

/// Stops the run with `message` (libFuzzer keeps the input) if `condition` is false.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

DecoderFuzzing.main(fuzzSVG)
