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
        /// What a store survives once it has returned. Default: ``Durability/processCrash``.
        public var durability: Durability
        /// Which stores write an entry. Default: ``Admission/always``.
        public var admission: Admission
        /// Where warnings (corrupt entries, I/O errors) go. Default: label "imago".
        public var logger: Logger

        /// A configuration with the documented defaults, overridable by argument.
        public init(
            sizeLimit: Int = 150 << 20,
            maxAge: Duration? = .seconds(7 * 24 * 3600),
            maintenanceInterval: Duration? = .seconds(60),
            currentDate: @escaping @Sendable () -> Date = { Date() },
            durability: Durability = .processCrash,
            admission: Admission = .always,
            logger: Logger = Logger(label: "imago")
        ) {
            self.sizeLimit = sizeLimit
            self.maxAge = maxAge
            self.maintenanceInterval = maintenanceInterval
            self.currentDate = currentDate
            self.durability = durability
            self.admission = admission
            self.logger = logger
        }

        /// Checks the limits: a size limit, an age and an interval above zero.
        public func validate() throws(ConfigurationError) {
            try ConfigurationError.require(sizeLimit > 0, "disk cache size limit \(sizeLimit) bytes: expected 1 or more")
            try ConfigurationError.require(
                maxAge.map { $0 > .zero } ?? true, "disk cache max age \(maxAge.map { "\($0)" } ?? ""): expected more than 0")
            try ConfigurationError.require(
                maintenanceInterval.map { $0 > .zero } ?? true,
                "disk cache maintenance interval \(maintenanceInterval.map { "\($0)" } ?? ""): expected more than 0"
            )
        }
    }

    /// What a stored entry survives.
    public enum Durability: Sendable, Equatable {
        /// A killed or crashed process: the file is written whole, then
        /// renamed into place, so an entry is whole or absent. After a power
        /// cut the newest entries may be torn (their tails lost or zeroed);
        /// the checksum catches that on read, and a torn entry is removed and
        /// reported as a miss, never served. No fsync: the cheap default.
        case processCrash
        /// A power cut as well: the entry's file is flushed to the device
        /// before the rename and its folder after it, so a store that has
        /// returned is on the device. Costs two fsyncs a store.
        case powerLoss
    }

    /// Which stores of a key that has no entry write one. A store that
    /// replaces an entry always writes.
    public enum Admission: Sendable, Equatable {
        /// Every store writes.
        case always
        /// A key's first store is only remembered, and its second writes:
        /// data used once (one thumbnail of a source nobody asks for again)
        /// costs no write and evicts no entry that is used. Keys are
        /// remembered in memory, 8 bytes each, for at least `window / 2` stores
        /// of other new keys; not across a restart.
        case secondStore(window: Int)
    }
}
