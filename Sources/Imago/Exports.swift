// The image type, codecs and resampling, and the memory and disk caches,
// are modules of their own, so that they build (and are fuzzed) without the
// network stack; `import Imago` brings them along.
@_exported import ImagoCaching
@_exported import ImagoCodecs
