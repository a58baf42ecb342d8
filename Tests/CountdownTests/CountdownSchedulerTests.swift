import Countdown
import Dispatch
import Foundation
import Testing

/// Issue 25: what was untested. The production scheduler fires at (never before) its
/// instant and not after a cancel; `extend` on a finished countdown starts it afresh.
@Suite struct CountdownSchedulerTests {
    @Test func theDispatchSchedulerFiresAtItsInstantAndNotWhenCancelled() async {
        let scheduler = DispatchCountdownScheduler()
        let clock = SystemCountdownClock()
        let target = clock.now.advanced(by: .milliseconds(50))
        let fired = await withCheckedContinuation { (continuation: CheckedContinuation<CountdownInstant, Never>) in
            _ = scheduler.schedule(at: target) { continuation.resume(returning: clock.now) }
        }
        #expect(fired >= target)

        // The contract stops a wake-up only if it has not fired yet, so what is asserted
        // depends on whether `cancel()` returned before the instant: a test process frozen
        // for longer than the wait (a loaded CI machine) may see it fire, and then only at
        // or after its instant.
        let cancelledFired = FiredFlag()
        let cancelledInstant = clock.now.advanced(by: .milliseconds(300))
        let wakeUp = scheduler.schedule(at: cancelledInstant) { cancelledFired.set(at: clock.now) }
        wakeUp.cancel()
        let cancelReturned = clock.now
        wakeUp.cancel()  // twice is harmless
        // A later wake-up on the same serial queue proves the cancelled one's time passed.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            _ = scheduler.schedule(at: cancelledInstant.advanced(by: .milliseconds(100))) { continuation.resume() }
        }
        if cancelReturned < cancelledInstant {
            #expect(cancelledFired.firedAt == nil)
        } else if let firedAt = cancelledFired.firedAt {
            #expect(firedAt >= cancelledInstant)
        }
    }

    @Test func extendingAFinishedCountdownStartsItAfresh() {
        let clock = VirtualClock()
        let center = CountdownCenter(clock: clock, scheduler: clock, tolerance: .zero)
        center.start("a", remaining: .seconds(2))
        clock.advance(by: .seconds(3))
        #expect(center.currentEvent(for: "a") == .finished)
        center.extend("a", by: .seconds(5))
        #expect(center.currentEvent(for: "a") == .value(CountdownValue(totalSeconds: 5)))
        // Extending by nothing, or less than nothing, starts nothing.
        center.start("b", remaining: .seconds(1))
        clock.advance(by: .seconds(2))
        center.extend("b", by: .zero)
        #expect(center.currentEvent(for: "b") == .finished)
    }
}

private final class FiredFlag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var instant: CountdownInstant?

    var firedAt: CountdownInstant? { lock.withLock { instant } }

    func set(at now: CountdownInstant) { lock.withLock { instant = now } }
}
