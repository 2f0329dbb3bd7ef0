import DecoderFuzzing
import ImagoCodecs

/// libFuzzer's entry point: one input through `AVIFDecoder`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAVIF(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    DecoderFuzzing.run(AVIFDecoder(), bytes, count)
}

DecoderFuzzing.main(fuzzAVIF)
