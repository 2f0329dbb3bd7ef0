import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `ICODecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzICO(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(ICODecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzICO)
