import Countdown
import Dispatch

/// One countdown as the original apps ran it: its own repeating 1 s timer, re-reading
/// the clock on each fire and updating when the displayed value changed.
final class TimerCountdown: @unchecked Sendable {
    // @unchecked: mutated only on the serial queue its timer fires on.
    let deadline: CountdownInstant
    var shown: Int64
    var timer: DispatchSourceTimer?

    init(deadline: CountdownInstant, shown: Int64) {
        self.deadline = deadline
        self.shown = shown
    }
}

/// Ticks every countdown with its own `DispatchSourceTimer`, on one serial queue.
func runBaselinePhase(_ options: BenchOptions) -> PhaseResult {
    let queue = DispatchQueue(label: "bench.baseline")
    let clock = SystemCountdownClock()
    return runPhase(options, queue: queue, start: { (remaining, counter) -> [TimerCountdown] in
        let now = clock.now
        return remaining.map { milliseconds in
            let countdown = TimerCountdown(deadline: now.advanced(by: .milliseconds(milliseconds)),
                                           shown: CountdownValue(remainingMilliseconds: milliseconds).totalSeconds)
            let timer = DispatchSource.makeTimerSource(queue: queue)
            // Started when the countdown started, so it ticks on the countdown's own second boundaries.
            timer.schedule(deadline: .now() + .milliseconds(Int(milliseconds % 1_000)), repeating: .seconds(1), leeway: .nanoseconds(0))
            timer.setEventHandler { [unowned countdown] in
                let shown = CountdownValue(remaining: clock.now.duration(to: countdown.deadline)).totalSeconds
                if shown != countdown.shown {
                    countdown.shown = shown
                    counter.changes += 1
                }
                if shown == 0 { countdown.timer?.cancel() }
            }
            countdown.timer = timer
            timer.activate()
            return countdown
        }
    }, stop: { countdowns in countdowns.forEach { $0.timer?.cancel() } })
}
