import CTiff
import Foundation
import ImagoCodecs

extension FormatFixtures {
    /// One page of a TIFF written by libtiff: samples as libtiff takes them
    /// and the tags that say how they are stored.
    public struct TIFFPage {
        /// The page's size.
        public var width: Int
        /// The page's size.
        public var height: Int
        /// Interleaved samples, row by row: bytes for up to 8 bits a sample
        /// (rows padded to a whole byte), native-endian `UInt16`s for 16.
        public var samples: [UInt8]
        /// Bits a sample: 1, 2, 4, 8 or 16.
        public var bitsPerSample: Int
        /// Samples a pixel, extra samples included.
        public var samplesPerPixel: Int
        /// PHOTOMETRIC_MINISBLACK, PHOTOMETRIC_RGB, PHOTOMETRIC_PALETTE, ...
        public var photometric: Int32
        /// COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE, ...
        public var compression: Int32 = COMPRESSION_NONE
        /// Whether each sample is stored in a plane of its own (8 and 16 bits only).
        public var separatePlanes = false
        /// EXTRASAMPLE_ASSOCALPHA, EXTRASAMPLE_UNASSALPHA or EXTRASAMPLE_UNSPECIFIED, one per extra sample.
        public var extraSamples: [Int32] = []
        /// The palette: 2^bits reds, then as many greens, then blues, 16 bits each.
        public var colormap: [UInt16]?
        /// The orientation tag, 1 to 8.
        public var orientation: Int?
        /// Tiles of this size (a multiple of 16) instead of strips.
        public var tileSize: Int?
        /// Rows a strip; default all of them.
        public var rowsPerStrip: Int?
        /// PREDICTOR_HORIZONTAL for LZW and Deflate.
        public var predictor: Int32?
        /// The ICC profile tag.
        public var iccProfile: Data?
        /// The XMP tag.
        public var xmp: Data?

        /// A page of raw samples.
        public init(width: Int, height: Int, samples: [UInt8], bitsPerSample: Int = 8, samplesPerPixel: Int, photometric: Int32) {
            self.width = width
            self.height = height
            self.samples = samples
            self.bitsPerSample = bitsPerSample
            self.samplesPerPixel = samplesPerPixel
            self.photometric = photometric
        }

        /// A page of `image`'s pixels, 8 bits a sample: gray or RGB, its alpha
        /// unassociated (or associated: the colours are premultiplied here).
        public init(_ image: Image, associatedAlpha: Bool = false) {
            let channels = image.pixelFormat.bytesPerPixel
            var samples = [UInt8]()
            samples.reserveCapacity(image.width * image.height * channels)
            for y in 0..<image.height {
                let row = image.pixels[(y * image.bytesPerRow)..<(y * image.bytesPerRow + image.width * channels)]
                samples += row
            }
            if associatedAlpha, image.pixelFormat.hasAlpha {
                for pixel in 0..<(image.width * image.height) {
                    let alpha = Int(samples[pixel * channels + channels - 1])
                    for channel in 0..<(channels - 1) {
                        let index = pixel * channels + channel
                        samples[index] = UInt8((Int(samples[index]) * alpha + 127) / 255)
                    }
                }
            }
            self.init(
                width: image.width, height: image.height, samples: samples, samplesPerPixel: channels,
                photometric: channels <= 2 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB
            )
            if image.pixelFormat.hasAlpha { extraSamples = [associatedAlpha ? EXTRASAMPLE_ASSOCALPHA : EXTRASAMPLE_UNASSALPHA] }
        }
    }

    /// A TIFF of `pages`, written by libtiff into memory, little-endian
    /// unless `bigEndian`.
    public static func tiff(_ pages: [TIFFPage], bigEndian: Bool = false) throws -> Data {
        let output = TIFFOutput()
        let context = Unmanaged.passUnretained(output).toOpaque()
        let file = withExtendedLifetime(output) {
            TIFFClientOpen(
                "fixture", bigEndian ? "wb" : "wl", context,
                { context, buffer, size in
                    guard let context, let buffer else { return -1 }
                    return Unmanaged<TIFFOutput>.fromOpaque(context).takeUnretainedValue().read(buffer, Int(size))
                },
                { context, buffer, size in
                    guard let context, let buffer else { return -1 }
                    return Unmanaged<TIFFOutput>.fromOpaque(context).takeUnretainedValue().write(buffer, Int(size))
                },
                { context, offset, whence in
                    guard let context else { return toff_t.max }
                    return Unmanaged<TIFFOutput>.fromOpaque(context).takeUnretainedValue().seek(Int(truncatingIfNeeded: offset), whence)
                },
                { _ in 0 },
                { context in
                    guard let context else { return 0 }
                    return toff_t(Unmanaged<TIFFOutput>.fromOpaque(context).takeUnretainedValue().bytes.count)
                },
                { _, _, _ in 0 },
                { _, _, _ in }
            )
        }
        guard let file else { throw Failure(description: "TIFFClientOpen failed") }
        for page in pages {
            do {
                try write(page, to: file)
            } catch {
                TIFFClose(file)
                throw error
            }
        }
        TIFFClose(file)
        return Data(output.bytes)
    }

    private static func write(_ page: TIFFPage, to file: OpaquePointer) throws {
        func set(_ tag: Int32, _ arguments: CVarArg...) throws {
            guard withVaList(arguments, { TIFFVSetField(file, UInt32(tag), $0) }) == 1 else {
                throw Failure(description: "TIFFSetField(\(tag)) failed")
            }
        }
        try set(TIFFTAG_IMAGEWIDTH, UInt32(page.width))
        try set(TIFFTAG_IMAGELENGTH, UInt32(page.height))
        try set(TIFFTAG_BITSPERSAMPLE, Int32(page.bitsPerSample))
        try set(TIFFTAG_SAMPLESPERPIXEL, Int32(page.samplesPerPixel))
        try set(TIFFTAG_PHOTOMETRIC, page.photometric)
        try set(TIFFTAG_COMPRESSION, page.compression)
        try set(TIFFTAG_PLANARCONFIG, page.separatePlanes ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG)
        if page.compression == COMPRESSION_JPEG { try set(TIFFTAG_JPEGQUALITY, Int32(95)) }
        if let predictor = page.predictor { try set(TIFFTAG_PREDICTOR, predictor) }
        if let orientation = page.orientation { try set(TIFFTAG_ORIENTATION, Int32(orientation)) }
        var extraSamples = page.extraSamples.map { UInt16($0) }
        if !extraSamples.isEmpty {
            try extraSamples.withUnsafeMutableBufferPointer { try set(TIFFTAG_EXTRASAMPLES, Int32($0.count), $0.baseAddress!) }
        }
        if var colormap = page.colormap {
            let count = colormap.count / 3
            try colormap.withUnsafeMutableBufferPointer { map in
                try set(TIFFTAG_COLORMAP, map.baseAddress!, map.baseAddress! + count, map.baseAddress! + 2 * count)
            }
        }
        for (tag, block) in [(TIFFTAG_ICCPROFILE, page.iccProfile), (TIFFTAG_XMLPACKET, page.xmp)] {
            guard var block else { continue }
            try block.withUnsafeMutableBytes { try set(tag, UInt32($0.count), $0.bindMemory(to: UInt8.self).baseAddress!) }
        }
        let rowBytes = (page.width * page.samplesPerPixel * page.bitsPerSample + 7) / 8
        var samples = page.samples
        guard samples.count == rowBytes * page.height else { throw Failure(description: "\(samples.count) bytes of samples") }
        if let tileSize = page.tileSize {
            try set(TIFFTAG_TILEWIDTH, UInt32(tileSize))
            try set(TIFFTAG_TILELENGTH, UInt32(tileSize))
            let pixelBytes = page.samplesPerPixel * page.bitsPerSample / 8
            for top in stride(from: 0, to: page.height, by: tileSize) {
                for left in stride(from: 0, to: page.width, by: tileSize) {
                    var tile = [UInt8](repeating: 0, count: tileSize * tileSize * pixelBytes)
                    for y in top..<min(page.height, top + tileSize) {
                        let columns = min(page.width, left + tileSize) - left
                        let source = y * rowBytes + left * pixelBytes
                        tile.replaceSubrange(
                            ((y - top) * tileSize * pixelBytes)..<((y - top) * tileSize * pixelBytes + columns * pixelBytes),
                            with: samples[source..<(source + columns * pixelBytes)])
                    }
                    guard tile.withUnsafeMutableBytes({ TIFFWriteTile(file, $0.baseAddress, UInt32(left), UInt32(top), 0, 0) }) >= 0 else {
                        throw Failure(description: "TIFFWriteTile failed")
                    }
                }
            }
        } else {
            try set(TIFFTAG_ROWSPERSTRIP, UInt32(page.rowsPerStrip ?? page.height))
            if page.separatePlanes {
                // One plane a sample: every row of the first sample, then of the second...
                let sampleBytes = page.bitsPerSample / 8
                for sample in 0..<page.samplesPerPixel {
                    for y in 0..<page.height {
                        var plane = [UInt8]()
                        for x in 0..<page.width {
                            let start = y * rowBytes + (x * page.samplesPerPixel + sample) * sampleBytes
                            plane += samples[start..<(start + sampleBytes)]
                        }
                        guard plane.withUnsafeMutableBytes({ TIFFWriteScanline(file, $0.baseAddress, UInt32(y), UInt16(sample)) }) == 1 else {
                            throw Failure(description: "TIFFWriteScanline failed")
                        }
                    }
                }
            } else {
                for y in 0..<page.height {
                    let written = samples.withUnsafeMutableBytes { TIFFWriteScanline(file, $0.baseAddress! + y * rowBytes, UInt32(y), 0) }
                    guard written == 1 else { throw Failure(description: "TIFFWriteScanline failed") }
                }
            }
        }
        guard TIFFWriteDirectory(file) == 1 else { throw Failure(description: "TIFFWriteDirectory failed") }
    }
}

/// The growing buffer libtiff writes a fixture into (and reads back from,
/// when it rewrites a directory).
private final class TIFFOutput {
    var bytes: [UInt8] = []
    var offset = 0

    func read(_ buffer: UnsafeMutableRawPointer, _ size: Int) -> tmsize_t {
        let count = max(0, min(size, bytes.count - offset))
        bytes.withUnsafeBytes { if count > 0 { buffer.copyMemory(from: $0.baseAddress! + offset, byteCount: count) } }
        offset += count
        return tmsize_t(count)
    }

    func write(_ buffer: UnsafeMutableRawPointer, _ size: Int) -> tmsize_t {
        if bytes.count < offset + size { bytes += [UInt8](repeating: 0, count: offset + size - bytes.count) }
        bytes.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: offset).copyMemory(from: buffer, byteCount: size) }
        offset += size
        return tmsize_t(size)
    }

    func seek(_ target: Int, _ whence: Int32) -> toff_t {
        switch whence {
        case SEEK_SET: offset = target
        case SEEK_CUR: offset += target
        case SEEK_END: offset = bytes.count + target
        default: return toff_t.max
        }
        return toff_t(offset)
    }
}
