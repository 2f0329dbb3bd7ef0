import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `PNGDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPNG(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(PNGDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzPNG)
