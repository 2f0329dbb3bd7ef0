import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `JXLDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJXL(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(JXLDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzJXL)
