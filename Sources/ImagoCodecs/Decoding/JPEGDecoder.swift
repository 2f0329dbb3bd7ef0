import CTurboJPEG
import Foundation

/// Decodes JPEG with libjpeg-turbo's TurboJPEG API, scaling down in the DCT
/// domain (1/8 to 7/8) when a target size allows, which is both faster and
/// far smaller in memory than decoding at full size and resizing.
///
/// Grayscale JPEGs decode to ``Image/PixelFormat/gray8``, CMYK and YCCK ones
/// are converted to RGB (Adobe's inverted CMYK, as virtually all CMYK JPEGs
/// are written), everything else decodes to ``Image/PixelFormat/rgb8``.
/// An embedded ICC profile (APP2) is converted from, to sRGB, unless
/// ``ImageDecodingOptions/convertsToSRGB`` is off; CMYK without one is
/// converted as browsers do.
/// libjpeg warnings (a truncated scan, extraneous bytes before a marker) do
/// not fail the decode, as in browsers; the damaged part shows as gray. An
/// error that follows a warning still fails it. The EXIF
/// orientation is applied, so the image comes out upright.
public struct JPEGDecoder: ImageDecoding {
    /// Creates a JPEG decoder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .jpeg }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        guard let handle = tjInitDecompress() else {
            throw ImageDecodingError(code: .corrupt, format: .jpeg, detail: "TurboJPEG could not start")
        }
        defer { tjDestroy(handle) }
        let orientation = ImageOrientation(jpeg: data)
        var space: DeclaredColorSpace?
        let result = data.withUnsafeBytes { bytes -> Result<Image, ImageDecodingError> in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count > 0 else {
                return .failure(ImageDecodingError(code: .corrupt, format: .jpeg, detail: "empty data"))
            }
            space = options.convertsToSRGB ? JPEGSegments.iccProfile(in: bytes).map(DeclaredColorSpace.icc) : nil
            return Result { () throws(ImageDecodingError) in
                try decode(handle, base, UInt(bytes.count), orientation: orientation, space: &space, options: options)
            }
        }
        let image = orientation.apply(to: try result.get())
        // Scaled to the output size first: the decode is only as small as
        // DCT scaling allows, and converting fewer pixels costs less.
        return space.map { options.scaled(image).convertedToSRGB(from: $0) } ?? image
    }

    private func decode(
        _ handle: tjhandle, _ jpeg: UnsafePointer<UInt8>, _ size: UInt, orientation: ImageOrientation, space: inout DeclaredColorSpace?,
        options: ImageDecodingOptions
    ) throws(ImageDecodingError) -> Image {
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        // A warning (extraneous bytes before a marker, a common glitch)
        // comes with a valid header, as it does after decoding: go on.
        guard
            tjDecompressHeader3(handle, jpeg, size, &width, &height, &subsampling, &colorspace) == 0
                || isWarning(handle) && width > 0 && height > 0
        else {
            throw error(handle)
        }
        try options.checkPixelCount(width: Int(width), height: Int(height), format: .jpeg)
        // The output size is the upright image's: turn it back to the stored axes.
        let stored = ImageSize(width: Int(width), height: Int(height))
        let output = options.outputSize(for: orientation.swapsDimensions ? stored.transposed : stored)
        let scaled = Self.scaledSize(stored, covering: orientation.swapsDimensions ? output.transposed : output)
        let isGray = colorspace == Int32(TJCS_GRAY.rawValue)
        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let format: Int32 = isGray ? TJPF_GRAY.rawValue : isCMYK ? TJPF_CMYK.rawValue : TJPF_RGB.rawValue
        let channels = isGray ? 1 : isCMYK ? 4 : 3
        var status: Int32 = 0
        // Uninitialised: a decode without a warning writes every byte; after
        // a warning the buffer is not trusted (below).
        var buffer = [UInt8](unsafeUninitializedCapacity: scaled.width * scaled.height * channels) { output, initialized in
            status = tjDecompress2(handle, jpeg, size, output.baseAddress, Int32(scaled.width), 0, Int32(scaled.height), format, 0)
            initialized = output.count
        }
        if status != 0 {
            guard isWarning(handle) else { throw error(handle) }
            buffer = try decodeAfterWarning(handle, jpeg, size, scaled, format: format, count: buffer.count)
        }
        if isCMYK {
            // CMYK pixels go to sRGB here: they cannot be resampled first.
            buffer = Self.rgb(fromInvertedCMYK: buffer, convertingFrom: space)
            space = nil
        }
        let image = Image(width: scaled.width, height: scaled.height, pixelFormat: isGray ? .gray8 : .rgb8, pixels: buffer)
        guard let image else { throw ImageDecodingError(code: .corrupt, format: .jpeg, detail: "inconsistent sizes") }
        return image
    }

    /// Decodes again after a warning, into two buffers filled differently.
    ///
    /// TurboJPEG reports an error that follows a warning as a warning too
    /// (extraneous bytes, then an undefined quantization table), having
    /// written part of the buffer or none of it: a byte the two decodes
    /// disagree on was never written, and the decode failed. Otherwise the
    /// warning was only one (a truncated scan shows as gray) and every byte
    /// is the decoder's. Only damaged files pay for the two decodes.
    private func decodeAfterWarning(
        _ handle: tjhandle, _ jpeg: UnsafePointer<UInt8>, _ size: UInt, _ scaled: ImageSize, format: Int32, count: Int
    ) throws(ImageDecodingError) -> [UInt8] {
        func decode(filledWith fill: UInt8) -> [UInt8] {
            var buffer = [UInt8](repeating: fill, count: count)
            buffer.withUnsafeMutableBufferPointer { output in
                _ = tjDecompress2(handle, jpeg, size, output.baseAddress, Int32(scaled.width), 0, Int32(scaled.height), format, 0)
            }
            return buffer
        }
        let zeros = decode(filledWith: 0)
        guard zeros == decode(filledWith: 0xFF) else { throw error(handle) }
        return zeros
    }

    /// The smallest size TurboJPEG can decode `size` to that still covers
    /// `output` (the size the image is shown at, which a content mode of fit
    /// or fill gave): the smallest factor n/8 no smaller than
    /// max(output w / w, output h / h). Never larger than the original.
    /// 4000x3000 filling 256x256 (341x256) gives 1/8, 500x375; 1024x768
    /// fitting 256x256 (256x192) gives 1/4, exactly 256x192.
    static func scaledSize(_ size: ImageSize, covering output: ImageSize) -> ImageSize {
        let (width, height) = (size.width, size.height)
        let needed = max(Double(output.width) / Double(width), Double(output.height) / Double(height))
        guard needed < 1 else { return size }
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return size }
        var best = (num: 1, denom: 1)
        for factor in UnsafeBufferPointer(start: factors, count: Int(count)) {
            let value = Double(factor.num) / Double(factor.denom)
            if value >= needed, value < Double(best.num) / Double(best.denom) {
                best = (Int(factor.num), Int(factor.denom))
            }
        }
        // TJSCALED: ceil(dimension * num / denom).
        return ImageSize(
            width: (width * best.num + best.denom - 1) / best.denom,
            height: (height * best.num + best.denom - 1) / best.denom
        )
    }

    /// sRGB pixels for CMYK ones, which Adobe writes inverted (255 = no
    /// ink): through the file's CMYK profile when it has one, else as
    /// browsers show CMYK without a profile, R = C * K / 255 (on the
    /// inverted values).
    static func rgb(fromInvertedCMYK cmyk: [UInt8], convertingFrom space: DeclaredColorSpace? = nil) -> [UInt8] {
        let count = cmyk.count / 4
        let transform = space.flatMap { ColorTransform.toSRGB(from: $0, .invertedCMYK8, to: .rgb8) }
        return [UInt8](unsafeUninitializedCapacity: count * 3) { rgb, initialized in
            cmyk.withUnsafeBufferPointer { source in
                if let transform, let input = source.baseAddress, let output = rgb.baseAddress {
                    transform.convert(input, into: output, count: count)
                    return
                }
                for i in 0..<count {
                    let k = UInt32(source[i * 4 + 3])
                    rgb[i * 3] = UInt8(UInt32(source[i * 4]) * k / 255)
                    rgb[i * 3 + 1] = UInt8(UInt32(source[i * 4 + 1]) * k / 255)
                    rgb[i * 3 + 2] = UInt8(UInt32(source[i * 4 + 2]) * k / 255)
                }
            }
            initialized = count * 3
        }
    }

    private func isWarning(_ handle: tjhandle) -> Bool {
        tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
    }

    private func error(_ handle: tjhandle) -> ImageDecodingError {
        let message = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
        return ImageDecodingError(code: .corrupt, format: .jpeg, detail: message)
    }
}
