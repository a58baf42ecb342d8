import Dispatch

/// The production scheduler: a one-shot `DispatchSourceTimer` per wake-up, on a queue you
/// choose (a serial one; the center's events are delivered there unless a subscription
/// names its own queue).
///
/// Dispatch timers count uptime, which stops while the device sleeps, whereas
/// ``SystemCountdownClock`` keeps counting. So a wait is never armed for more than
/// ``maximumWait``: after a sleep the next wake-up comes within that long, re-reads the
/// clock, and either fires or re-arms.
public struct DispatchCountdownScheduler: CountdownScheduler {
    /// Longest single timer arm, bounding the lag after the device sleeps.
    public static let maximumWait: Duration = .seconds(1)

    /// The queue the timers fire on.
    public let queue: DispatchQueue
    /// How late dispatch may fire a timer, so the system can coalesce wake-ups.
    public let leeway: DispatchTimeInterval

    /// Makes a scheduler firing on `queue` (a new serial queue by default).
    public init(queue: DispatchQueue = DispatchQueue(label: "resendgate.countdown.ticker"),
                leeway: DispatchTimeInterval = .milliseconds(2)) {
        self.queue = queue
        self.leeway = leeway
    }

    public func schedule(at instant: CountdownInstant, _ fire: @escaping @Sendable () -> Void) -> any CountdownWakeUp {
        let wakeUp = DispatchWakeUp(timer: DispatchSource.makeTimerSource(queue: queue))
        let leeway = self.leeway
        wakeUp.arm(until: instant, leeway: leeway)
        wakeUp.timer.setEventHandler { [wakeUp] in
            if SystemCountdownClock().now >= instant {
                wakeUp.timer.cancel()
                fire()
            } else {
                wakeUp.arm(until: instant, leeway: leeway)
            }
        }
        wakeUp.timer.activate()
        return wakeUp
    }
}

/// One armed dispatch timer. Cancelling it releases its handler (and so the center's closure).
final class DispatchWakeUp: CountdownWakeUp, @unchecked Sendable {
    // @unchecked: DispatchSourceTimer is thread-safe but not annotated Sendable on every platform.
    let timer: DispatchSourceTimer

    init(timer: DispatchSourceTimer) {
        self.timer = timer
    }

    func arm(until instant: CountdownInstant, leeway: DispatchTimeInterval) {
        let wait = max(.zero, min(SystemCountdownClock().now.duration(to: instant), DispatchCountdownScheduler.maximumWait))
        // Round up so that the timer never fires before the instant it was armed for.
        let nanoseconds = Int((wait + .nanoseconds(999)).countdownNanoseconds / 1_000 * 1_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .never, leeway: leeway)
    }

    func cancel() {
        timer.cancel()
    }
}
