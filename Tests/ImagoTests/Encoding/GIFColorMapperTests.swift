import Testing

@testable import ImagoCodecs

@Suite("GIF colour mapper: nearest colours of a fixed palette, dithered, stable from frame to frame, with its fit and a transparent index")
struct GIFColorMapperTests {
    /// 16 greys, 0 to 255 by 17.
    static let grays: [(red: UInt8, green: UInt8, blue: UInt8)] = (0..<16).map { index in
        let value = UInt8(index * 17)
        return (value, value, value)
    }

    /// An opaque pixel of grey `index` of ``grays``.
    static func grayPixel(_ index: Int) -> UInt32 {
        let value = UInt8(index * 17)
        return GIFPixels.opaque(value, value, value)
    }

    /// A 48x32 gradient over red and green with blue noise from `seed`.
    static func photo(seed: UInt32) -> [UInt32] {
        var state = seed
        return (0..<(48 * 32)).map { position in
            state = state &* 1_664_525 &+ 1_013_904_223
            return GIFPixels.opaque(UInt8(position % 48 * 5), UInt8(position / 48 * 7), UInt8(truncatingIfNeeded: state >> 24))
        }
    }

    @Test("pixels of the palette's colours map to them exactly, with no error")
    func exactColors() {
        // Given a palette of 16 greys and pixels of those greys
        let mapper = GIFColorMapper(colors: Self.grays)
        let pixels = (0..<64).map { Self.grayPixel($0 % 16) }
        // When mapped with full dithering
        let mapping = mapper.map(pixels, width: 8, height: 8, dithering: 1)
        // Then each pixel gets its own grey, the fit is perfect, and the
        // table is the greys and black for transparency
        #expect(mapping.palette.indices == (0..<64).map { UInt8($0 % 16) })
        #expect(mapping.meanSquaredError == 0)
        #expect(mapping.palette.transparentIndex == nil)
        #expect(mapping.palette.colors.count == 17)
    }

    @Test("a flat colour between two of the palette's is dithered to its average; without dithering it takes the nearest")
    func dithering() {
        // Given black and white, and a 32x32 grey of 100
        let mapper = GIFColorMapper(colors: [(0, 0, 0), (255, 255, 255)])
        let pixels = [UInt32](repeating: GIFPixels.opaque(100, 100, 100), count: 32 * 32)
        // When mapped with and without dithering
        let dithered = mapper.map(pixels, width: 32, height: 32, dithering: 1).palette
        let flat = mapper.map(pixels, width: 32, height: 32, dithering: 0).palette
        // Then
        let average = Double(dithered.indices.reduce(0) { $0 + Int($1) }) * 255 / Double(pixels.count)
        #expect(abs(average - 100) < 3, "average \(average)")
        #expect(flat.indices.allSatisfy { $0 == 0 })
    }

    @Test("without dithering, a pixel takes the colour nearest to the centre of its cell (6 bits a channel), wherever it is in the palette")
    func nearest() {
        // Given a palette of 200 seeded colours, and 2000 seeded pixels
        var state: UInt32 = 7
        func random() -> (UInt8, UInt8, UInt8) {
            state = state &* 1_664_525 &+ 1_013_904_223
            return (UInt8(truncatingIfNeeded: state >> 8), UInt8(truncatingIfNeeded: state >> 16), UInt8(truncatingIfNeeded: state >> 24))
        }
        let colors = (0..<200).map { _ in random() }.map { (red: $0.0, green: $0.1, blue: $0.2) }
        let pixels = (0..<2000).map { _ in random() }
        // When mapped without dithering
        let indices = GIFColorMapper(colors: colors).map(
            pixels.map { GIFPixels.opaque($0.0, $0.1, $0.2) }, width: 2000, height: 1, dithering: 0
        ).palette.indices
        // Then each took a colour as near to its cell's centre as any
        func distance(_ color: (red: UInt8, green: UInt8, blue: UInt8), _ pixel: (UInt8, UInt8, UInt8)) -> Int {
            let centre: [Int] = [pixel.0, pixel.1, pixel.2].map { Int($0 & ~3 | 2) }
            let differences: [Int] = [Int(color.red) - centre[0], Int(color.green) - centre[1], Int(color.blue) - centre[2]]
            return differences.reduce(0) { $0 + $1 * $1 }
        }
        for (pixel, index) in zip(pixels, indices) {
            let best = colors.map { distance($0, pixel) }.min()!
            #expect(distance(colors[Int(index)], pixel) == best, "pixel \(pixel) took colour \(index)")
        }
    }

    @Test("colours the palette lacks show as a large error")
    func missingColors() {
        // Given greys, and a frame of saturated red
        let mapper = GIFColorMapper(colors: Self.grays)
        let pixels = [UInt32](repeating: GIFPixels.opaque(230, 20, 20), count: 16 * 16)
        // When mapped
        let error = mapper.map(pixels, width: 16, height: 16, dithering: 1).meanSquaredError
        // Then the error is what the nearest grey (85) misses by, far past
        // what the encoder accepts of a shared palette
        #expect(error == Double(145 * 145 + 65 * 65 + 65 * 65))
        #expect(!GIFAnimationWriter.acceptsSharedPalette(error: error, fit: 0))
    }

    @Test("transparent pixels take the index after the colours and pass no error on")
    func transparency() {
        // Given a palette of greys and pixels half transparent
        let mapper = GIFColorMapper(colors: Self.grays)
        let pixels = (0..<64).map { $0 % 2 == 0 ? GIFPixels.transparent : Self.grayPixel(2) }
        // When mapped
        let mapping = mapper.map(pixels, width: 8, height: 8, dithering: 1)
        // Then transparent pixels have index 16, the others their grey
        #expect(mapping.palette.transparentIndex == 16)
        #expect(mapping.palette.indices == (0..<64).map { $0 % 2 == 0 ? 16 : 2 })
        #expect(mapping.meanSquaredError == 0)
    }

    @Test("stable: the same pixels give the same indices whatever was mapped before, and rows above a change keep theirs")
    func stability() {
        // Given a palette of 64 colours, a photo, and the photo with its
        // bottom half changed
        let colors = (0..<64).map { index -> (red: UInt8, green: UInt8, blue: UInt8) in
            let (red, green, blue): (Int, Int, Int) = (index % 4 * 80, index / 4 % 4 * 80, index / 16 * 80)
            return (UInt8(red), UInt8(green), UInt8(blue))
        }
        let mapper = GIFColorMapper(colors: colors)
        let photo = Self.photo(seed: 1)
        let changed = Array(photo.prefix(48 * 16)) + Array(Self.photo(seed: 2).suffix(48 * 16))
        // When the photo is mapped, then the changed one, then the photo
        // again by the same mapper, and by a new one
        let first = mapper.map(photo, width: 48, height: 32, dithering: 1).palette.indices
        let other = mapper.map(changed, width: 48, height: 32, dithering: 1).palette.indices
        let again = mapper.map(photo, width: 48, height: 32, dithering: 1).palette.indices
        let fresh = GIFColorMapper(colors: colors).map(photo, width: 48, height: 32, dithering: 1).palette.indices
        // Then the photo's indices are the same each time, and the changed
        // frame's top half has the photo's
        #expect(again == first)
        #expect(fresh == first)
        #expect(other.prefix(48 * 16) == first.prefix(48 * 16))
        #expect(other != first)
    }
}
