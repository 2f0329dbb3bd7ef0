/// How urgent a piece of work is: queued downloads, decodes and disk jobs
/// start highest priority first. The library names it
/// `ImageRequest.Priority`.
public enum WorkPriority: Int, Sendable, Comparable, CaseIterable {
    case veryLow, low, normal, high, veryHigh

    public static func < (lhs: WorkPriority, rhs: WorkPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The priority of a task that runs work of this priority.
    package var taskPriority: TaskPriority {
        switch self {
        case .veryLow, .low: .low
        case .normal: .medium
        case .high, .veryHigh: .high
        }
    }
}
