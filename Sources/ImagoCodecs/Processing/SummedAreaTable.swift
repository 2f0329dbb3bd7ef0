/// The saliency of a ``SaliencyMap`` summed over every rectangle of cells from the top-left
/// corner, each cell weighed by its share of a full cell's pixels: `sums[i * (columns + 1) + j]`
/// is the total of the cells above row boundary i and left of column boundary j.
///
/// Read at a pixel between two boundaries, the table is interpolated linearly: the saliency of a
/// cell is taken as spread evenly over its pixels.
struct SummedAreaTable {
    let map: SaliencyMap
    let sums: [Double]

    init(_ map: SaliencyMap) {
        self.map = map
        let stride = map.columns + 1
        var sums = [Double](repeating: 0, count: stride * (map.rows + 1))
        let cell = Double(map.cellSize)
        for row in 0..<map.rows {
            var rowSum = 0.0
            // The last row and column of cells are up to twice as large, so weigh up to twice as much.
            let rowShare = Double(SaliencyMap.span(of: row, cells: map.rows, cellSize: map.cellSize, length: map.height).count) / cell
            for column in 0..<map.columns {
                let columnSpan = SaliencyMap.span(of: column, cells: map.columns, cellSize: map.cellSize, length: map.width)
                let share = rowShare * Double(columnSpan.count) / cell
                rowSum += Double(map.values[row * map.columns + column]) * share
                sums[(row + 1) * stride + column + 1] = sums[row * stride + column + 1] + rowSum
            }
        }
        self.sums = sums
    }

    /// The saliency of the whole image.
    var total: Double { sums[sums.count - 1] }

    /// Where pixel column `x` (0...width) falls between the column boundaries.
    func columnPosition(_ x: Int) -> GridPosition {
        GridPosition(x, length: map.width, cellSize: map.cellSize, cells: map.columns)
    }

    /// Where pixel row `y` (0...height) falls between the row boundaries.
    func rowPosition(_ y: Int) -> GridPosition {
        GridPosition(y, length: map.height, cellSize: map.cellSize, cells: map.rows)
    }

    /// For each row boundary, the saliency above it between pixel columns `left` and `right`.
    func columnTotals(from left: Int, to right: Int, into totals: inout [Double]) {
        let stride = map.columns + 1
        let start = columnPosition(left)
        let end = columnPosition(right)
        for row in 0...map.rows {
            totals[row] = end.read(sums, from: row * stride) - start.read(sums, from: row * stride)
        }
    }
}

/// A pixel's place among a grid's cell boundaries: the boundary at or before it, and how far it is toward the next.
struct GridPosition {
    var index: Int
    var fraction: Double

    /// The place of `pixel` (0...`length`) along a side cut into `cells` cells (``SaliencyMap/span(of:cells:cellSize:length:)``).
    init(_ pixel: Int, length: Int, cellSize: Int, cells: Int) {
        let cell = min(pixel / cellSize, cells - 1)
        let span = SaliencyMap.span(of: cell, cells: cells, cellSize: cellSize, length: length)
        let fraction = Double(pixel - span.lowerBound) / Double(span.count)
        (index, self.fraction) = fraction >= 1 ? (cell + 1, 0) : (cell, fraction)
    }

    /// Values given at the boundaries (from `start` on in `values`), read here by linear interpolation.
    func read(_ values: [Double], from start: Int = 0) -> Double {
        let value = values[start + index]
        guard fraction > 0 else { return value }
        return value + (values[start + index + 1] - value) * fraction
    }
}
