// The image type, codecs and resampling are a module of their own, so that
// they build (and are fuzzed) without the network stack; `import Imago`
// brings them along.
@_exported import ImagoCodecs
