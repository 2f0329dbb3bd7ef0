import Foundation
import Logging

extension DiskCache {
    /// The limits and clocks of a ``DiskCache``.
    public struct Configuration: Sendable {
        /// The most bytes the entries' files may take together. Default: 150 MiB.
        public var sizeLimit: Int
        /// Entries not read or written for longer than this are removed by
        /// ``DiskCache/removeExpired()`` and by the periodic sweep. Default:
        /// 7 days; nil keeps entries until the size limit evicts them.
        public var maxAge: Duration?
        /// How often the cache saves its index snapshot (if it changed) and
        /// removes expired entries, on a background queue. Default: 60 seconds;
        /// nil turns the timer off (call ``DiskCache/flush()`` and
        /// ``DiskCache/removeExpired()`` yourself).
        public var maintenanceInterval: Duration?
        /// The clock for access times and expiry. Default: the system clock;
        /// tests pass a manual one.
        public var currentDate: @Sendable () -> Date
        /// Where warnings (corrupt entries, I/O errors) go. Default: label "imago".
        public var logger: Logger

        /// A configuration with the documented defaults, overridable by argument.
        public init(
            sizeLimit: Int = 150 << 20,
            maxAge: Duration? = .seconds(7 * 24 * 3600),
            maintenanceInterval: Duration? = .seconds(60),
            currentDate: @escaping @Sendable () -> Date = { Date() },
            logger: Logger = Logger(label: "imago")
        ) {
            self.sizeLimit = sizeLimit
            self.maxAge = maxAge
            self.maintenanceInterval = maintenanceInterval
            self.currentDate = currentDate
            self.logger = logger
        }
    }
}
