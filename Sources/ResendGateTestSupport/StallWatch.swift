import Foundation

/// How long this test process was frozen or starved, measured, so that a test whose
/// verdict depends on real time can tell a slow product from a stalled test (a CI machine
/// writing back dirty pages froze whole test processes for 1 to 15 s; ~100 parallel tests
/// on 2 cores starve threads for hundreds of milliseconds).
///
/// A thread of its own wakes every 5 ms; a gap between two wake-ups longer than 50 ms is
/// a stall. A freeze of the process (SIGSTOP, a stalled page fault) stops that thread
/// with the rest, so it shows as one gap; the gap still open when asked counts too (the
/// thread asking may run before the watch's thread after a freeze).
///
/// Touch `StallWatch.shared` (or call `mark()`) before the interval it is asked about: it
/// knows nothing of stalls from before it started, and then reports none (the strict
/// verdict).
public final class StallWatch: @unchecked Sendable {
    // @unchecked: `stalls` and `lastWake` are guarded by `lock`.
    public static let shared = StallWatch()

    private static let beat = Duration.milliseconds(5)
    private static let threshold = Duration.milliseconds(50)

    private let lock = NSLock()
    private var stalls: [(start: ContinuousClock.Instant, end: ContinuousClock.Instant)] = []
    private var lastWake: ContinuousClock.Instant

    private init() {
        lastWake = .now
        let thread = Thread { [self] in run() }
        thread.name = "stall-watch"
        thread.start()
    }

    /// Now, with the watch running (the start of an interval asked about later).
    public static func mark() -> ContinuousClock.Instant {
        _ = shared
        return .now
    }

    /// How much of `start...end` this process spent stalled.
    public func stalled(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant = .now) -> Duration {
        let now = ContinuousClock.now
        return lock.withLock {
            var all = stalls
            if now - lastWake > Self.threshold { all.append((lastWake + Self.beat, now)) }
            var total = Duration.zero
            for stall in all where stall.end > start && stall.start < end {
                total += min(stall.end, end) - max(stall.start, start)
            }
            return total
        }
    }

    /// The time since `start` that this process ran (the time passed less its stalls).
    public func ran(since start: ContinuousClock.Instant) -> Duration {
        let now = ContinuousClock.now
        return (now - start) - stalled(from: start, to: now)
    }

    private func run() {
        while true {
            usleep(UInt32(Self.beat / .microseconds(1)))
            let now = ContinuousClock.now
            lock.withLock {
                if now - lastWake > Self.threshold {
                    stalls.append((lastWake + Self.beat, now))
                    if stalls.count > 100_000 { stalls.removeFirst(50_000) }
                }
                lastWake = now
            }
        }
    }
}

/// A deadline that charges only the time this process ran: a wait for something the
/// product promises "within N" still fails when it never comes, but a test process frozen
/// past N (the product's threads frozen with it, or the answer unread) is given its N.
public struct PatientDeadline: Sendable {
    public let start: ContinuousClock.Instant
    public let budget: Duration

    public init(_ budget: Duration) {
        start = StallWatch.mark()
        self.budget = budget
    }

    public var hasPassed: Bool { StallWatch.shared.ran(since: start) >= budget }

    public var hasTimeLeft: Bool { !hasPassed }
}
