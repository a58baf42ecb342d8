import Foundation

/// Where a ``CountdownCenter`` reads the time.
///
/// Two readings, for two jobs: `now` is monotonic and decides every displayed value, so
/// changing the wall clock never moves a countdown; `wallNow` is read only to convert a
/// wall-clock deadline (a saved ``CountdownState``, a server's `resend_at`) once, when it
/// enters the center.
public protocol CountdownClock: Sendable {
    /// The current monotonic instant. Never goes backwards; unaffected by wall-clock changes.
    var now: CountdownInstant { get }
    /// The current wall-clock time.
    var wallNow: Date { get }
}

/// The production clock: `ContinuousClock` (keeps counting while the device sleeps) for
/// `now`, and `Date()` for `wallNow`.
public struct SystemCountdownClock: CountdownClock {
    /// All instants of this clock count from here (the first use in this process).
    private static let origin = ContinuousClock.now

    public init() {}

    public var now: CountdownInstant {
        CountdownInstant(nanoseconds: Self.origin.duration(to: ContinuousClock.now).countdownNanoseconds)
    }

    public var wallNow: Date { Date() }
}
