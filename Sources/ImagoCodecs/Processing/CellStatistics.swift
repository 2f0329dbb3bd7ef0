/// The box shrink behind ``SaliencyMap``: each cell's mean red, green, blue and luminance and
/// the standard deviation of its luminance, 0...255, colour premultiplied by alpha (so that
/// what is transparent counts as black, whatever colour it hides).
///
/// Cells of 8 pixels or more are sampled on every other row and column: a quarter of the
/// reads, and still hundreds of samples a cell in a large image.
struct CellStatistics {
    var red: [Float]
    var green: [Float]
    var blue: [Float]
    var luminance: [Float]
    var deviation: [Float]

    init(_ image: Image, cellSize: Int, columns: Int, rows: Int) {
        let count = columns * rows
        red = [Float](repeating: 0, count: count)
        green = red
        blue = red
        luminance = red
        deviation = red
        let step = cellSize >= 8 ? 2 : 1
        // Per column of cells: sums of red, green, blue, luminance, squared luminance, and samples.
        var sums = [UInt64](repeating: 0, count: columns * 6)
        image.pixels.withUnsafeBufferPointer { pixels in
            sums.withUnsafeMutableBufferPointer { sums in
                for row in 0..<rows {
                    for index in 0..<sums.count { sums[index] = 0 }
                    let span = SaliencyMap.span(of: row, cells: rows, cellSize: cellSize, length: image.height)
                    for y in stride(from: span.lowerBound, to: span.upperBound, by: step) {
                        let line = pixels.baseAddress! + y * image.bytesPerRow
                        switch image.pixelFormat {
                        case .rgb8:
                            Self.accumulate(line, width: image.width, columns: columns, channels: 3, cellSize: cellSize, step: step, into: sums)
                        case .rgba8:
                            Self.accumulate(line, width: image.width, columns: columns, channels: 4, cellSize: cellSize, step: step, into: sums)
                        case .gray8:
                            Self.accumulate(line, width: image.width, columns: columns, channels: 1, cellSize: cellSize, step: step, into: sums)
                        case .grayAlpha8:
                            Self.accumulate(line, width: image.width, columns: columns, channels: 2, cellSize: cellSize, step: step, into: sums)
                        }
                    }
                    for column in 0..<columns {
                        let cell = sums.baseAddress! + column * 6
                        let samples = Double(max(1, cell[5]))
                        let index = row * columns + column
                        red[index] = Float(Double(cell[0]) / samples)
                        green[index] = Float(Double(cell[1]) / samples)
                        blue[index] = Float(Double(cell[2]) / samples)
                        let mean = Double(cell[3]) / samples
                        luminance[index] = Float(mean)
                        deviation[index] = Float(max(0, Double(cell[4]) / samples - mean * mean).squareRoot())
                    }
                }
            }
        }
    }

    /// Adds one row's samples to the sums of the cells it crosses. `channels` is a constant at each
    /// call, so each pixel format gets a loop of its own.
    @inline(__always)
    private static func accumulate(
        _ line: UnsafePointer<UInt8>, width: Int, columns: Int, channels: Int, cellSize: Int, step: Int, into sums: UnsafeMutableBufferPointer<UInt64>
    ) {
        let hasAlpha = channels == 2 || channels == 4
        let isGray = channels < 3
        var left = 0
        var column = 0
        while left < width {
            let right = column == columns - 1 ? width : left + cellSize
            // Wrapping arithmetic, free of overflow checks, and safe: a cell row's sums stay below
            // 2 x cellSize x 255 (x 255 for the squares, kept in 64 bits), far from 2^32 for any image that fits in memory.
            var r: UInt32 = 0
            var g: UInt32 = 0
            var b: UInt32 = 0
            var y: UInt32 = 0
            var yy: UInt64 = 0
            var x = left
            while x < right {
                let pixel = line + x &* channels
                var red = UInt32(pixel[0])
                var green = isGray ? red : UInt32(pixel[1])
                var blue = isGray ? red : UInt32(pixel[2])
                if hasAlpha {
                    let alpha = UInt32(pixel[channels - 1])
                    red = (red &* alpha &+ 127) / 255
                    green = isGray ? red : (green &* alpha &+ 127) / 255
                    blue = isGray ? red : (blue &* alpha &+ 127) / 255
                }
                // Rec. 709 luma in 8 bits: 54 + 183 + 19 = 256.
                let luma = isGray ? red : (54 &* red &+ 183 &* green &+ 19 &* blue) >> 8
                r &+= red
                g &+= green
                b &+= blue
                y &+= luma
                yy &+= UInt64(luma &* luma)
                x &+= step
            }
            let samples = (right - left + step - 1) / step
            let cell = column * 6
            sums[cell] += UInt64(r)
            sums[cell + 1] += UInt64(g)
            sums[cell + 2] += UInt64(b)
            sums[cell + 3] += UInt64(y)
            sums[cell + 4] += yy
            sums[cell + 5] += UInt64(samples)
            left = right
            column += 1
        }
    }
}
