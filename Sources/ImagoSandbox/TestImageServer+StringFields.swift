import Foundation
import Imago

// The server's tests still spell fields as (name, value) pairs of strings.
// These two keep them compiling until they move to `HTTPFields`; then this
// file goes.

extension TestImageServer.Response {
    /// Creates a response whose fields are (name, value) pairs; a pair whose
    /// name HTTP does not allow is left out.
    public init(status: Int = 200, headers: [(String, String)], body: Data = Data(), delay: Duration = .zero, behaviour: Behaviour = .normal) {
        let fields = headers.compactMap { name, value in HTTPField.Name(name).map { HTTPField(name: $0, value: value) } }
        self.init(status: status, headers: HTTPFields(fields), body: body, delay: delay, behaviour: behaviour)
    }
}

extension TestImageServer.Request {
    /// The value of the first field named `name` (in any case).
    public func header(_ name: String) -> String? {
        HTTPField.Name(name).flatMap { headers.first($0) }
    }
}
