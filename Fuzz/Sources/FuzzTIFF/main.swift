import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `TIFFDecoder`, its first
/// pages too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTIFF(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(TIFFDecoder(), bytes, count, laterPages: 2)
}

DecoderFuzzing.main(fuzzTIFF)
