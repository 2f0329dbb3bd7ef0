import Foundation

extension ImageProcessors {
    /// Sharpened as libvips' `vips_sharpen` does with its defaults but
    /// `sigma` (x1 = 2, y2 = 10, y3 = 20, m1 = 0, m2 = 3), which imgproxy's
    /// `sharpen` calls: an unsharp mask on lightness (CIE L*, 0-100).
    ///
    /// Each pixel's L* is compared with a Gaussian blur of the L* around
    /// it. A difference within 2 is left alone (flat areas stay flat);
    /// beyond, the pixel's L* moves away from the blur by 3 times the
    /// excess, by at most 10 brighter and 20 darker. Hue and chroma (Lab
    /// a* and b*) are kept; alpha is kept; the blur weights each pixel by
    /// its alpha, so that the colour of transparent pixels does not bleed.
    ///
    /// The Gaussian is libvips' integer mask: `rint(20 exp(-x^2 / 2 sigma^2))`
    /// out to the last x whose unrounded value is at least 0.2, so a
    /// sigma below about 0.56 makes a one-pixel mask and changes nothing.
    /// Unlike libvips, the mask is cut and renormalised at the image's
    /// edges (libvips repeats the edge pixels), the arithmetic is in Float
    /// (libvips rounds L* to 1/327.67 steps), and the mask reaches at most
    /// 1,024 pixels each way (sigma above about 570 gets no wider).
    ///
    /// `sigma` 0, negative or not finite returns the image itself, as
    /// does a one-pixel mask; otherwise the result has the image's format
    /// and no animation (one frame is sharpened).
    public struct Sharpen: ImageProcessing, Hashable {
        /// The standard deviation of the Gaussian blur, in pixels.
        public var sigma: Double

        /// Creates a sharpening with a blur of `sigma` pixels.
        public init(sigma: Double) {
            self.sigma = sigma
        }

        /// `sharpen(sigma)`.
        public var identifier: String { "sharpen(\(sigma))" }

        public func process(_ image: Image) -> Image? {
            guard sigma > 0, sigma.isFinite else { return image }
            let kernel = Self.kernel(sigma: sigma)
            guard kernel.count > 1 else { return image }
            let (width, height) = (image.width, image.height)
            let format = image.pixelFormat
            let channels = format.bytesPerPixel
            let hasAlpha = format.hasAlpha
            let hasColor = format.hasColor
            // The blurred plane: L* alone, or L* times alpha and alpha.
            let planeChannels = hasAlpha ? 2 : 1
            let columns = FootprintTable(Footprint.convolution(count: width, kernel: kernel))
            let rows = Footprint.convolution(count: height, kernel: kernel)
            // Rows of L* and of the horizontally blurred plane, for as
            // many source rows as the tallest footprint: row y is still
            // there when output row y needs it (its footprint covers it).
            let ringRows = rows.map(\.weights.count).max() ?? 1
            let rowFloats = width * planeChannels
            let lightness = UnsafeMutablePointer<Float>.allocate(capacity: ringRows * width)
            let blurred = UnsafeMutablePointer<Float>.allocate(capacity: ringRows * rowFloats)
            let plane = UnsafeMutableBufferPointer<Float>.allocate(capacity: rowFloats)
            let sums = UnsafeMutablePointer<Float>.allocate(capacity: rowFloats)
            defer {
                lightness.deallocate()
                blurred.deallocate()
                plane.deallocate()
                sums.deallocate()
            }
            let rowBytes = width * channels
            let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { output, initialized in
                image.pixels.withUnsafeBufferPointer { source in
                    CIELightness.withTables { tables in
                        guard let source = source.baseAddress, let output = output.baseAddress else { return }
                        var blurredUpTo = -1
                        for (y, footprint) in rows.enumerated() {
                            while blurredUpTo < footprint.first + footprint.weights.count - 1 {
                                blurredUpTo += 1
                                let slot = blurredUpTo % ringRows
                                let row = source + blurredUpTo * image.bytesPerRow
                                let lightnessRow = lightness + slot * width
                                Self.lightness(of: row, count: width, format: format, tables: tables, into: lightnessRow)
                                if hasAlpha {
                                    for x in 0..<width {
                                        let alpha = Float(row[x * channels + channels - 1]) / 255
                                        plane[2 * x] = lightnessRow[x] * alpha
                                        plane[2 * x + 1] = alpha
                                    }
                                } else {
                                    plane.baseAddress?.update(from: lightnessRow, count: width)
                                }
                                let target = UnsafeMutableBufferPointer(start: blurred + slot * rowFloats, count: rowFloats)
                                columns.apply(to: UnsafeBufferPointer(plane), into: target, channels: planeChannels)
                            }
                            for index in 0..<rowFloats { sums[index] = 0 }
                            for (k, weight) in footprint.weights.enumerated() {
                                let blurredRow = blurred + ((footprint.first + k) % ringRows) * rowFloats
                                for index in 0..<rowFloats { sums[index] += blurredRow[index] * weight }
                            }

                            let from = source + y * image.bytesPerRow
                            let to = output + y * rowBytes
                            to.initialize(from: from, count: rowBytes)
                            let lightnessRow = lightness + (y % ringRows) * width
                            for x in 0..<width {
                                let around: Float
                                if hasAlpha {
                                    guard sums[2 * x + 1] > 0, from[x * channels + channels - 1] > 0 else { continue }
                                    around = sums[2 * x] / sums[2 * x + 1]
                                } else {
                                    around = sums[x]
                                }
                                let current = lightnessRow[x]
                                let change = min(100, max(0, current + Self.change(difference: current - around))) - current
                                guard change != 0 else { continue }
                                let pixel = to + x * channels
                                if hasColor {
                                    (pixel[0], pixel[1], pixel[2]) = tables.color(red: pixel[0], green: pixel[1], blue: pixel[2], changedBy: change)
                                } else {
                                    pixel[0] = tables.gray(pixel[0], changedBy: change)
                                }
                            }
                        }
                        initialized = rowBytes * height
                    }
                }
            }
            return Image(width: width, height: height, pixelFormat: format, pixels: pixels)
        }

        /// The change of L* for a pixel `difference` above the blur around
        /// it: libvips' sharpening curve with its default parameters.
        @inline(__always)
        static func change(difference: Float) -> Float {
            let (x1, m2, y2, y3): (Float, Float, Float, Float) = (2, 3, 10, 20)
            if difference >= x1 { return min(y2, (difference - x1) * m2) }
            if difference <= -x1 { return max(-y3, (difference + x1) * m2) }
            return 0
        }

        /// L* of `count` pixels of `format` from `row`.
        @inline(__always)
        private static func lightness(
            of row: UnsafePointer<UInt8>, count: Int, format: Image.PixelFormat, tables: CIELightness.Tables, into output: UnsafeMutablePointer<Float>
        ) {
            let channels = format.bytesPerPixel
            if format.hasColor {
                for x in 0..<count {
                    let pixel = row + x * channels
                    output[x] = tables.lightness(red: pixel[0], green: pixel[1], blue: pixel[2])
                }
            } else {
                for x in 0..<count { output[x] = tables.grayLightness[Int(row[x * channels])] }
            }
        }

        /// libvips' separable integer Gaussian (`vips_gaussmat` with
        /// min_ampl 0.2, as `vips_sharpen` asks): `rint(20 exp(-x^2 / 2 sigma^2))`
        /// for |x| below the first x whose value falls under 0.2 (searched
        /// up to 8 sigma), normalised; at most 1,024 each way.
        static func kernel(sigma: Double) -> [Float] {
            let twoSigmaSquared = 2 * sigma * sigma
            let limit = Int(min(1_025, 8 * sigma))
            var end = 0
            while end < limit, exp(-Double(end * end) / twoSigmaSquared) >= 0.2 { end += 1 }
            let reach = max(end - 1, 0)
            let weights = (-reach...reach).map { (20 * exp(-Double($0 * $0) / twoSigmaSquared)).rounded() }
            let total = weights.reduce(0, +)
            return weights.map { Float($0 / total) }
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Sharpen {
    /// Sharpens lightness as libvips' `sharpen` does, with a blur of `sigma` pixels.
    public static func sharpen(sigma: Double) -> Self { ImageProcessors.Sharpen(sigma: sigma) }
}
