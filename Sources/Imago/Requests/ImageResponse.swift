import Foundation

/// A loaded image, where it came from, and how long each stage took.
public struct ImageResponse: Sendable {
    /// Where an image came from.
    public enum Source: String, Sendable, Equatable {
        /// The memory cache: no I/O, no decoding.
        case memory
        /// The disk cache: decoded from stored data.
        case disk
        /// Downloaded (or produced by the request's data provider) and decoded.
        case network
    }

    /// Whether a cached image was checked with the server.
    public enum Freshness: Sendable {
        /// Downloaded now, read from memory, or read from disk while fresh.
        case fresh
        /// Read from disk after the server answered 304 Not Modified.
        case revalidated
        /// Read from disk past its freshness lifetime; stale images are not
        /// kept in memory, so the next request looks again.
        case stale(StaleReason)

        /// Whether the image is stale.
        public var isStale: Bool {
            if case .stale = self { return true }
            return false
        }
    }

    /// Why a stale image was served.
    public enum StaleReason: Sendable {
        /// Within the response's `stale-while-revalidate` window: a refresh runs in the background.
        case revalidatingInBackground
        /// The server could not be reached; this is the error the refresh met.
        case networkFailed(ImagePipeline.Error)
        /// The request asked for cached data only (``ImageRequest/NetworkPolicy/cacheOnly``,
        /// or `Cache-Control: only-if-cached` in its fields).
        case cacheOnly
        /// The request's `Cache-Control: max-stale` accepts it this stale.
        case acceptedByRequest
    }

    /// Stage durations. Stages that did not run are `nil`.
    public struct Timings: Sendable, Equatable {
        /// From the request to the result.
        public var total: Duration
        /// Reading the disk entry, for an image served from disk (a miss is not timed).
        public var diskRead: Duration?
        /// Waiting for a download slot and downloading.
        public var download: Duration?
        /// Waiting for a decoding slot and decoding.
        public var decode: Duration?

        /// Creates timings.
        public init(total: Duration = .zero, diskRead: Duration? = nil, download: Duration? = nil, decode: Duration? = nil) {
            self.total = total
            self.diskRead = diskRead
            self.download = download
            self.decode = decode
        }
    }

    /// The decoded image.
    public var image: Image
    /// The request, as the caller gave it.
    public var request: ImageRequest
    /// Where the image came from.
    public var source: Source
    /// Whether a disk image was fresh, revalidated, or served stale.
    public var freshness: Freshness
    /// The size of the encoded data, for disk and network loads.
    public var dataCount: Int?
    /// How long the stages took.
    public var timings: Timings

    /// Creates a response.
    public init(
        image: Image,
        request: ImageRequest,
        source: Source,
        freshness: Freshness = .fresh,
        dataCount: Int? = nil,
        timings: Timings = Timings()
    ) {
        self.image = image
        self.request = request
        self.source = source
        self.freshness = freshness
        self.dataCount = dataCount
        self.timings = timings
    }
}
