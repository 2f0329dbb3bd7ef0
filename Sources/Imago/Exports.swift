// Request and response fields are swift-http-types' `HTTPFields`, as in
// Hummingbird: an app names them (`[.accept: "image/webp"]`) without a
// second import.
@_exported import HTTPTypes
// The image type, codecs and resampling, and the memory and disk caches,
// are modules of their own, so that they build (and are fuzzed) without the
// network stack; `import Imago` brings them along.
@_exported import ImagoCaching
@_exported import ImagoCodecs
// `ImageRequest.Priority` is the pools' `WorkPriority`.
@_exported import ImagoConcurrency
