import NIOHTTP1

// AsyncHTTPClient and the sandbox's test server speak NIO's `HTTPHeaders`;
// everything past them speaks `HTTPFields`. These two conversions are the
// only crossing.

extension HTTPFields {
    /// The fields of a message head as NIO parsed them. A name HTTP does not
    /// allow is left out, and so are fields past the most `HTTPFields` holds:
    /// it traps beyond that, and only the parser's default configuration
    /// stops a response there first.
    package init(_ headers: HTTPHeaders) {
        self.init()
        reserveCapacity(Swift.min(headers.count, Self.capacityLimit))
        for (name, value) in headers {
            guard count < Self.capacityLimit else { break }
            guard let name = HTTPField.Name(name) else { continue }
            append(HTTPField(name: name, value: value))
        }
    }

    /// The most fields an `HTTPFields` value may hold.
    static let capacityLimit = Int(UInt16.max) - 1
}

extension HTTPHeaders {
    /// The same fields, names as they were spelled.
    package init(_ fields: HTTPFields) {
        self.init()
        reserveCapacity(fields.count)
        for field in fields {
            add(name: field.name.rawName, value: field.value)
        }
    }
}
