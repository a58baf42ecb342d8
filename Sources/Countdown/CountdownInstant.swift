/// A point on the monotonic timeline of a ``CountdownClock``: whole nanoseconds since
/// that clock's own origin.
///
/// An integer rather than `ContinuousClock.Instant` so that a virtual clock can make any
/// instant it likes and tests can assert exact times. Instants are only comparable within
/// one process and one clock; to carry a deadline across launches, save a
/// ``CountdownState`` (wall clock) instead.
public struct CountdownInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// Makes an instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The instant `duration` later (earlier when negative), saturating instead of trapping.
    public func advanced(by duration: Duration) -> CountdownInstant {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(duration.countdownNanoseconds)
        if overflow { return CountdownInstant(nanoseconds: duration < .zero ? .min : .max) }
        return CountdownInstant(nanoseconds: sum)
    }

    /// How long from this instant until `other` (negative when `other` is earlier).
    public func duration(to other: CountdownInstant) -> Duration {
        .nanoseconds(other.nanoseconds &- nanoseconds)
    }

    public static func < (lhs: CountdownInstant, rhs: CountdownInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    public var description: String { "\(nanoseconds)ns" }
}

extension Duration {
    /// This duration in whole nanoseconds (truncated toward zero), saturating at `Int64` bounds.
    var countdownNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }
}
