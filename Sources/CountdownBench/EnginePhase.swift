import Countdown
import Dispatch
import Foundation

/// Counts displayed changes; touched only on the ticker queue.
final class ChangeCounter: @unchecked Sendable {
    // @unchecked: only ever used from one serial queue.
    var changes: Int64 = 0
}

/// Ticks every countdown through one `CountdownCenter` on the production scheduler,
/// delivering inline on its serial queue.
func runEnginePhase(_ options: BenchOptions) -> PhaseResult {
    let queue = DispatchQueue(label: "bench.engine")
    let center = CountdownCenter(queue: queue)
    return runPhase(options, queue: queue, start: { remaining, counter in
        remaining.enumerated().map { index, milliseconds in
            let id = CountdownID("countdown-\(index)")
            center.start(id, remaining: .milliseconds(milliseconds))
            return center.subscribe(to: id) { _ in counter.changes += 1 }
        }
    }, stop: { tokens in tokens.forEach { $0.cancel() } })
}

/// Starts the phase's countdowns on `queue` (`start` gets their remaining milliseconds and
/// the counter to bump), measures the CPU time spent and changes counted over
/// `options.seconds` of wall time and the memory they took, then ends them with `stop`.
func runPhase<Running>(
    _ options: BenchOptions, queue: DispatchQueue, start: ([Int64], ChangeCounter) -> Running, stop: (Running) -> Void
) -> PhaseResult {
    let remaining = benchRemainingMilliseconds(count: options.countdowns, seed: options.seed)
    let counter = ChangeCounter()
    let residentBefore = BenchProbe.residentBytes()
    let running = queue.sync { start(remaining, counter) }
    let residentAfter = BenchProbe.residentBytes()
    let startChanges = queue.sync { counter.changes }
    let startCPU = BenchProbe.cpuNanoseconds()
    Thread.sleep(forTimeInterval: Double(options.seconds))
    let endChanges = queue.sync { counter.changes }
    let endCPU = BenchProbe.cpuNanoseconds()
    queue.sync { stop(running) }
    return PhaseResult(countdowns: options.countdowns, cpuNanoseconds: endCPU - startCPU,
                       displayedChanges: endChanges - startChanges, residentBytes: residentAfter - residentBefore)
}
