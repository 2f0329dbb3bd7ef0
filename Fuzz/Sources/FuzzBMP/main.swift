import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `BMPDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBMP(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(BMPDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzBMP)
