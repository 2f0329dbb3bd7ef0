/// Where the most interesting part of an image is, for cropping: a saliency measure in the manner of libvips'
/// attention strategy (edges, skin tones, saturation), computed on a small copy of the image (longest side ~ 64-128 px), never on the full image.
///
/// ```swift
/// let (x, y) = Saliency.bestCrop(in: image, width: 400, height: 400)
/// let square = ImageProcessors.Crop(x: x, y: y, width: 400, height: 400).process(image)
/// ```
///
/// 1. A box shrink to a grid of cells, 64 to 127 on the longest side (``SaliencyMap``), and a
///    saliency for each cell: edges (the Laplacian of the cells' luminance plus the detail
///    inside each cell), skin tones and saturation, each 0...1, added.
/// 2. A summed-area table of the grid, so that any window's total saliency costs four reads.
/// 3. The window is placed in full-size pixels: each cell's saliency is taken as spread evenly
///    over its pixels, so the table, interpolated linearly inside cells, gives the total under a
///    window at any pixel position. As the window slides, that total changes linearly between the
///    positions where one of its edges crosses a cell boundary, so only those positions (and the
///    centred one and the image's edges) need trying, and the best of them is the best anywhere.
/// 4. A centre bias, for images busy all over: moving the window off the centre changes which
///    cells it holds, and where the cells' saliency varies at random (noise, foliage) the total of
///    n changed cells varies by about s x sqrt(n), s being the cells' spread (their median
///    absolute deviation, which an object's few cells do not move). Each position's total loses
///    four times that, so the window leaves the centre only for more saliency than chance gives.
///    On a flat image every total is equal, and ties go to the most central window.
///
/// Unlike libvips, which centres the crop on the peak of a blurred saliency map, the window
/// holding the most saliency is chosen, which keeps a whole object in when the window can hold it
/// with a cell to spare on each side: the position is exact to within a cell (the image's longest
/// side / 64 pixels), as the saliency inside a cell is known only as a whole.
public enum Saliency {
    /// How many times what chance gives a uniformly busy image a window off the centre must gain.
    static let chanceMargin = 4.0

    /// The top-left corner of the `width` x `height` window of `image` that holds the most saliency; the window lies inside
    /// the image (sizes larger than the image are clamped). A flat or uniformly busy image gives the centred window (ties
    /// resolve toward the centre).
    ///
    /// Sizes below 1 are taken as 1. The work is a pass over the pixels to shrink them (every
    /// other row and column of a large image) and a few thousand window totals.
    public static func bestCrop(in image: Image, width: Int, height: Int) -> (x: Int, y: Int) {
        let windowWidth = max(1, min(width, image.width))
        let windowHeight = max(1, min(height, image.height))
        if windowWidth == image.width && windowHeight == image.height { return (0, 0) }
        let map = SaliencyMap(image)
        return bestWindow(in: map, width: windowWidth, height: windowHeight)
    }

    /// The best position of a `width` x `height` window (within the image) over `map`.
    static func bestWindow(in map: SaliencyMap, width: Int, height: Int) -> (x: Int, y: Int) {
        let table = SummedAreaTable(map)
        let xs = candidates(length: map.width, window: width, cellSize: map.cellSize, cells: map.columns)
        let ys = candidates(length: map.height, window: height, cellSize: map.cellSize, cells: map.rows)
        let yEdges = ys.map { (top: table.rowPosition($0), bottom: table.rowPosition($0 + height)) }
        let cell = Double(map.cellSize)
        // The window and its offsets from the centred window, in cells.
        let area = Double(width) / cell * Double(height) / cell
        let xOffsets = xs.map { Double(abs($0 - xs[0])) / cell }
        let yOffsets = ys.map { Double(abs($0 - ys[0])) / cell }
        let margin = chanceMargin * map.spread
        // Scores closer than this are ties (the table's rounding errors are far smaller).
        let tolerance = 1e-9 * max(1, table.total)
        var best = (x: xs[0], y: ys[0])
        var bestScore = -Double.infinity
        var bestOffset = Double.infinity
        var columnTotals = [Double](repeating: 0, count: map.rows + 1)
        for (xIndex, x) in xs.enumerated() {
            // The window's columns summed down to each row boundary: the table read across at x and x + width.
            table.columnTotals(from: x, to: x + width, into: &columnTotals)
            let xOffset = xOffsets[xIndex]
            for (yIndex, edges) in yEdges.enumerated() {
                let total = edges.bottom.read(columnTotals) - edges.top.read(columnTotals)
                let yOffset = yOffsets[yIndex]
                // The cells this window has and the centred one lacks, and the reverse.
                let overlap = max(0, Double(width) / cell - xOffset) * max(0, Double(height) / cell - yOffset)
                let changed = max(0, 2 * (area - overlap))
                let score = total - margin * changed.squareRoot()
                let offset = xOffset / Double(map.columns) + yOffset / Double(map.rows)
                if score > bestScore + tolerance || (score >= bestScore - tolerance && offset < bestOffset) {
                    best = (x, ys[yIndex])
                    bestScore = score
                    bestOffset = offset
                }
            }
        }
        return best
    }

    /// The positions worth trying for a window of `window` pixels along a side of `length`: the
    /// centred one first, the two ends, and those that put either edge of the window on a cell boundary.
    static func candidates(length: Int, window: Int, cellSize: Int, cells: Int) -> [Int] {
        let last = length - window
        var positions = [last / 2, 0, last]
        for boundary in (0..<cells).map({ $0 * cellSize }) + [length] {
            if boundary <= last { positions.append(boundary) }
            if boundary >= window { positions.append(boundary - window) }
        }
        var seen = Set<Int>()
        return positions.filter { seen.insert($0).inserted }
    }
}
