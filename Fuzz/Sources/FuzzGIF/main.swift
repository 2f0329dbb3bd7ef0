import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `GIFDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGIF(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(GIFDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzGIF)
