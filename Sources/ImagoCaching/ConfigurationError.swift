/// A configuration that cannot work, with the field and what was expected:
/// what every component's `validate()` throws, so that a bad value stops a
/// program at start rather than misbehaving later.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// Throws `message` unless `holds`.
    public static func require(_ holds: Bool, _ message: @autoclosure () -> String) throws(ConfigurationError) {
        if !holds { throw ConfigurationError(message()) }
    }
}
