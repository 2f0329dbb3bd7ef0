/// How interesting each cell of a coarse grid over an image is: the measure ``Saliency`` places
/// its crop windows with.
///
/// The image is cut into square cells of `cellSize` pixels (the last row and column of cells
/// also take the remainder, up to twice as large), so that the grid's longest side is 64 to 127
/// cells. One pass over the pixels gathers each cell's mean colour and the mean and mean square
/// of its luminance (``CellStatistics``, a box shrink: the only work done at full size). From
/// those, each cell gets three terms, each 0...1:
///
/// - edges: `e / (e + 32)`, where `e` is the absolute Laplacian of the cells' mean luminance
///   (contrast with the four neighbouring cells; zero across a smooth gradient) plus the
///   standard deviation of the luminance inside the cell (detail finer than a cell, which the
///   shrink would otherwise average away), both in levels of 255. The curve saturates, so that
///   a busy region counts as busy without its strongest edge drowning the rest;
/// - skin: how near the hue is to that of a skin tone, (0.78, 0.57, 0.44) in RGB, in the
///   opponent chroma plane (yellow-blue (r + g) / 2 - b, red-green r - g), in the manner of the
///   skin term of libvips' attention strategy (which tests a box of skin hues in CIELAB's a*b*):
///   1 on the skin tone's direction, 0 from 23 degrees away, gated by enough chroma (15 to 35
///   levels) and luminance (30 to 50) that grays and shadows do not count;
/// - saturation: the chroma (the length of the opponent colour), 0 up to 60 levels, 1 from 180
///   (pure red is 285, a skin tone about 80, a blue sky about 100).
///
/// Colour is judged over each cell and its eight neighbours. The three terms are added with
/// equal weights: in libvips too, a strong edge, a skin pixel and a saturated pixel weigh about
/// the same.
struct SaliencyMap {
    /// The image's size in pixels.
    let width: Int
    let height: Int
    /// The side of a cell in pixels.
    let cellSize: Int
    /// The grid's size in cells.
    let columns: Int
    let rows: Int
    /// Each cell's saliency, row by row.
    let values: [Float]
    /// How much the cells' saliency varies: the median absolute deviation from the median, scaled
    /// to estimate a standard deviation (x 1.4826) without being moved by the few cells of an object.
    let spread: Double

    /// The cell side for an image whose longest side is `longest`: the grid's longest side is then 64 to 127 cells (or the image's, if smaller).
    static func cellSize(forLongestSide longest: Int) -> Int { max(1, longest / 64) }

    /// The pixels of cell `cell` of `cells` along a side of `length` pixels: `cellSize` of them,
    /// and the rest of the side for the last cell, so that no cell is a sliver of a few noisy pixels.
    static func span(of cell: Int, cells: Int, cellSize: Int, length: Int) -> Range<Int> {
        let start = cell * cellSize
        return start..<(cell == cells - 1 ? length : start + cellSize)
    }

    init(_ image: Image) {
        width = image.width
        height = image.height
        cellSize = Self.cellSize(forLongestSide: max(width, height))
        columns = max(1, width / cellSize)
        rows = max(1, height / cellSize)
        let cells = CellStatistics(image, cellSize: cellSize, columns: columns, rows: rows)
        values = Self.saliency(of: cells, columns: columns, rows: rows)
        spread = Self.spread(of: values)
    }

    private static func spread(of values: [Float]) -> Double {
        var scratch = values
        let middle = median(&scratch)
        for index in scratch.indices { scratch[index] = abs(values[index] - middle) }
        return 1.4826 * Double(median(&scratch))
    }

    /// The middle value (the upper one of an even count), found by quickselect: `values` is reordered.
    static func median(_ values: inout [Float]) -> Float {
        guard !values.isEmpty else { return 0 }
        let target = values.count / 2
        return values.withUnsafeMutableBufferPointer { values in
            var low = 0
            var high = values.count - 1
            while low < high {
                // Hoare's partition around the middle element's value.
                let pivot = values[low + (high - low) / 2]
                var left = low
                var right = high
                while left <= right {
                    while values[left] < pivot { left += 1 }
                    while values[right] > pivot { right -= 1 }
                    if left <= right {
                        values.swapAt(left, right)
                        left += 1
                        right -= 1
                    }
                }
                if target <= right {
                    high = right
                } else if target >= left {
                    low = left
                } else {
                    break
                }
            }
            return values[target]
        }
    }

    /// Edges, skin and saturation of each cell, added.
    private static func saliency(of cells: CellStatistics, columns: Int, rows: Int) -> [Float] {
        // The reference skin tone's direction in the (yellow-blue, red-green) plane.
        let skinP: Float = (0.78 + 0.57) / 2 - 0.44
        let skinQ: Float = 0.78 - 0.57
        let skinLength = (skinP * skinP + skinQ * skinQ).squareRoot()
        let yellowBlue = Self.neighbourhoodMeans(zip(cells.red, zip(cells.green, cells.blue)).map { ($0 + $1.0) / 2 - $1.1 }, columns, rows)
        let redGreen = Self.neighbourhoodMeans(zip(cells.red, cells.green).map { $0 - $1 }, columns, rows)
        var values = [Float](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns {
                let index = row * columns + column
                let luminance = cells.luminance[index]
                // Borders repeat the edge cell, so the image's own border is no edge.
                let left = cells.luminance[index - (column > 0 ? 1 : 0)]
                let right = cells.luminance[index + (column < columns - 1 ? 1 : 0)]
                let up = cells.luminance[index - (row > 0 ? columns : 0)]
                let down = cells.luminance[index + (row < rows - 1 ? columns : 0)]
                let laplacian = abs(4 * luminance - left - right - up - down)
                let contrast = laplacian + cells.deviation[index]
                let edges = contrast / (contrast + 32)

                let p = yellowBlue[index]
                let q = redGreen[index]
                let chroma = (p * p + q * q).squareRoot()
                var skin: Float = 0
                if chroma > 0 {
                    let cosine = (p * skinP + q * skinQ) / (chroma * skinLength)
                    // The distance between the two unit vectors: about the angle, in radians, for small angles.
                    let distance = max(0, 2 - 2 * cosine).squareRoot()
                    let hue = max(0, 1 - distance / 0.4)
                    skin = hue * ramp(chroma, from: 15, to: 35) * ramp(luminance, from: 30, to: 50)
                }
                let saturation = ramp(chroma, from: 60, to: 180)
                values[index] = edges + skin + saturation
            }
        }
        return values
    }

    /// Each cell's mean with its neighbours (3 x 3 cells, fewer at the borders). Colour is judged
    /// over a neighbourhood so that noise, whose mean over one cell still has a random hue, does
    /// not read as skin or saturation.
    private static func neighbourhoodMeans(_ values: [Float], _ columns: Int, _ rows: Int) -> [Float] {
        var across = values
        for row in 0..<rows {
            for column in 0..<columns {
                let first = max(0, column - 1)
                let last = min(columns - 1, column + 1)
                var sum: Float = 0
                for neighbour in first...last { sum += values[row * columns + neighbour] }
                across[row * columns + column] = sum / Float(last - first + 1)
            }
        }
        var means = across
        for row in 0..<rows {
            let first = max(0, row - 1)
            let last = min(rows - 1, row + 1)
            for column in 0..<columns {
                var sum: Float = 0
                for neighbour in first...last { sum += across[neighbour * columns + column] }
                means[row * columns + column] = sum / Float(last - first + 1)
            }
        }
        return means
    }

    /// 0 up to `low`, 1 from `high`, linear between.
    private static func ramp(_ value: Float, from low: Float, to high: Float) -> Float {
        max(0, min(1, (value - low) / (high - low)))
    }
}
