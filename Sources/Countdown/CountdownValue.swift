/// The value a countdown displays: whole seconds remaining, rounded **up**, and that
/// number split into days, hours, minutes and seconds with integer arithmetic (so `9:60`
/// cannot happen).
///
/// Rounding up means 59 001 ms shows 60 and 1 ms shows 1: the display reaches 0 only
/// when no time remains.
public struct CountdownValue: Hashable, Sendable, Codable, Comparable {
    /// Whole seconds remaining, `ceil(remaining)`; never negative.
    public let totalSeconds: Int64

    /// A value of `totalSeconds` (negative values count as 0).
    public init(totalSeconds: Int64) {
        self.totalSeconds = max(0, totalSeconds)
    }

    /// The value displayed when `milliseconds` remain: `ceil(milliseconds / 1000)`, 0 if none remain.
    public init(remainingMilliseconds milliseconds: Int64) {
        self.init(totalSeconds: milliseconds <= 0 ? 0 : (milliseconds - 1) / 1_000 + 1)
    }

    /// The value displayed when `nanoseconds` remain: `ceil(nanoseconds / 10⁹)`, 0 if none remain.
    public init(remainingNanoseconds nanoseconds: Int64) {
        self.init(totalSeconds: nanoseconds <= 0 ? 0 : (nanoseconds - 1) / 1_000_000_000 + 1)
    }

    /// The value displayed when `duration` remains.
    public init(remaining duration: Duration) {
        self.init(remainingNanoseconds: duration.countdownNanoseconds)
    }

    /// Whole days.
    public var days: Int64 { totalSeconds / 86_400 }
    /// Hours past the whole days, 0...23.
    public var hours: Int64 { totalSeconds % 86_400 / 3_600 }
    /// Minutes past the whole hours, 0...59.
    public var minutes: Int64 { totalSeconds % 3_600 / 60 }
    /// Seconds past the whole minutes, 0...59.
    public var seconds: Int64 { totalSeconds % 60 }

    /// True when no time remains.
    public var isZero: Bool { totalSeconds == 0 }

    public static func < (lhs: CountdownValue, rhs: CountdownValue) -> Bool {
        lhs.totalSeconds < rhs.totalSeconds
    }
}
