import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `HEIFDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHEIC(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(HEIFDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzHEIC)
