import Foundation
import ImagoCodecFixtures
import ImagoSandbox
import Testing

@testable import ImagoCodecs

/// Each page of a TIFF carries its own profile, or none: a page is
/// converted from its own, never from the first page's.
@Suite struct TIFFPageColorTests {
    @Test func eachPageIsConvertedFromItsOwnProfile() throws {
        // Given a photo, and its pixels in ProPhoto RGB as tificc stores them
        let folder = TemporaryDirectory("imago-color-tiff-pages")
        let original = ColorFixtures.photo(width: 96, height: 64)
        let (originalPath, convertedPath) = (folder.appending("o.tif"), folder.appending("c.tif"))
        let profilePath = ColorConversionTests.profiles + "/rommrgb.icc"
        try FormatFixtures.tiff([FormatFixtures.TIFFPage(original)]).write(to: URL(fileURLWithPath: originalPath))
        try CommandLineTool.tificc.run(["-w8", "-o" + profilePath, originalPath, convertedPath])
        let stored = try TIFFDecoder().decode(Data(contentsOf: URL(fileURLWithPath: convertedPath)), options: .init(convertsToSRGB: false))
        var proPhoto = FormatFixtures.TIFFPage(stored)
        proPhoto.iccProfile = try Data(contentsOf: URL(fileURLWithPath: profilePath))
        let plain = FormatFixtures.TIFFPage(original)
        // When files hold the two as pages, in either order
        let profileSecond = try FormatFixtures.tiff([plain, proPhoto])
        let profileFirst = try FormatFixtures.tiff([proPhoto, plain])
        // Then the page with the profile is converted, and the page without is as stored
        #expect(try TIFFDecoder().decode(profileSecond, options: .init(page: 0)) == original)
        #expect(try ColorFixtures.meanDeltaE(TIFFDecoder().decode(profileSecond, options: .init(page: 1)), original) <= 2)
        #expect(try ColorFixtures.meanDeltaE(TIFFDecoder().decode(profileFirst, options: .init(page: 0)), original) <= 2)
        #expect(try TIFFDecoder().decode(profileFirst, options: .init(page: 1)) == original)
        // And the stored ProPhoto pixels are far from the original, so the checks can fail
        #expect(try ColorFixtures.meanDeltaE(stored, original) > 2)
    }
}
