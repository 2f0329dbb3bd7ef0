import ImagoCodecFixtures

/// The test images moved to the `ImagoCodecFixtures` library, which the
/// fuzzers' seed generator (`Fuzz/`) shares; the tests keep the short name,
/// without an import in every file.
typealias FormatFixtures = ImagoCodecFixtures.FormatFixtures
