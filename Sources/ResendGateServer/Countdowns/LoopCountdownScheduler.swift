import Countdown
import GateEventLoop

/// Wakes a worker's ``CountdownCenter`` from the worker's loop, with one libevent timer
/// however many countdowns it serves (the center keeps one wake-up outstanding).
///
/// `@unchecked`: loop-confined (the center calls `schedule` only from calls and wake-ups
/// on the loop); the protocol asks for `Sendable` because other schedulers fire elsewhere.
final class LoopCountdownScheduler: CountdownScheduler, @unchecked Sendable {
    private let clock: any CountdownClock
    private var timer: EventTimer?
    private var pending: (instant: CountdownInstant, serial: UInt64, fire: @Sendable () -> Void)?
    private var serial: UInt64 = 0

    init(loop: EventLoop, clock: any CountdownClock) {
        self.clock = clock
        timer = EventTimer(loop: loop) { [unowned self] in self.timerFired() }
    }

    func schedule(at instant: CountdownInstant, _ fire: @escaping @Sendable () -> Void) -> any CountdownWakeUp {
        serial &+= 1
        pending = (instant, serial, fire)
        arm(for: instant)  // event_add never runs the callback synchronously
        return LoopWakeUp(scheduler: self, serial: serial)
    }

    fileprivate func cancel(serial: UInt64) {
        guard pending?.serial == serial else { return }
        pending = nil
        timer?.cancel()
    }

    private func arm(for instant: CountdownInstant) {
        timer?.schedule(after: max(.zero, clock.now.duration(to: instant)))
    }

    /// libevent reads a coarse monotonic clock, so a timer may fire a little before the
    /// instant on ours: re-arm for the rest rather than wake the center early.
    private func timerFired() {
        guard let due = pending else { return }
        guard clock.now >= due.instant else { return arm(for: due.instant) }
        pending = nil
        due.fire()
    }
}

private struct LoopWakeUp: CountdownWakeUp {
    let scheduler: LoopCountdownScheduler
    let serial: UInt64

    func cancel() {
        scheduler.cancel(serial: serial)
    }
}
