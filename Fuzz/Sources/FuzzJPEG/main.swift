import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `JPEGDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEG(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(JPEGDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzJPEG)
