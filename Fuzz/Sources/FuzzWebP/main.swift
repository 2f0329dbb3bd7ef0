import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `WebPDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebP(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(WebPDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzWebP)
