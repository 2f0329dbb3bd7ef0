/// Frame durations in seconds turned into a format's whole ticks
/// (centiseconds for GIF, milliseconds for WebP and AVIF).
///
/// Each frame ends at the tick nearest to the sum of the durations so far,
/// so rounding errors do not add up over a long animation. A frame is never
/// shorter than `minimumTicks`: browsers show a frame of 10 ms or less for
/// 100 ms (the rule ``ImageAnimation`` decodes with), so a shorter one is
/// written as the shortest they show as it is, and the frames after it
/// catch up. A frame longer than the format can say is cut to `maximumTicks`.
struct AnimationTimeline {
    let ticksPerSecond: Int
    let minimumTicks: Int
    let maximumTicks: Int
    /// The sum of the durations given so far, in seconds.
    private var elapsedSeconds: Double = 0
    /// The sum of the ticks returned so far.
    private(set) var elapsedTicks = 0

    init(ticksPerSecond: Int, minimumTicks: Int, maximumTicks: Int) {
        self.ticksPerSecond = ticksPerSecond
        self.minimumTicks = minimumTicks
        self.maximumTicks = maximumTicks
    }

    /// The ticks of the next frame, shown for `duration` seconds (finite and
    /// not negative: ``AnimationInput/check(_:duration:index:)`` has checked it).
    mutating func ticks(for duration: Double) -> Int {
        // Bounded first, so that no sum grows past what an Int holds.
        let bounded = min(max(0, duration), Double(maximumTicks) / Double(ticksPerSecond))
        elapsedSeconds += bounded
        // Kept below Int's limit, however many frames have been added.
        let end = Int(min(elapsedSeconds * Double(ticksPerSecond), 0x1p62).rounded())
        let ticks = min(maximumTicks, max(minimumTicks, end - elapsedTicks))
        elapsedTicks += ticks
        return ticks
    }
}
