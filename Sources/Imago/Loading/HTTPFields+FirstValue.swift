extension HTTPFields {
    /// The value of the first field named `name`, as it arrived.
    ///
    /// For the fields that hold one value (a date, a validator, a range):
    /// `self[name]` joins repeated fields with commas into a new string, which
    /// for a repeated Date or ETag is no value at all, and costs an
    /// allocation on every disk hit.
    package func first(_ name: HTTPField.Name) -> String? {
        first(where: { $0.name == name })?.value
    }
}
