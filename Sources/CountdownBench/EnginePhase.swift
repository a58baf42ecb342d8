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
    let remaining = benchRemainingMilliseconds(count: options.countdowns, seed: options.seed)
    let queue = DispatchQueue(label: "bench.engine")
    let counter = ChangeCounter()
    let residentBefore = BenchProbe.residentBytes()
    let center = CountdownCenter(queue: queue)
    let tokens: [CountdownSubscription] = queue.sync {
        remaining.enumerated().map { index, milliseconds in
            let id = CountdownID("countdown-\(index)")
            center.start(id, remaining: .milliseconds(milliseconds))
            return center.subscribe(to: id) { _ in counter.changes += 1 }
        }
    }
    let residentAfter = BenchProbe.residentBytes()
    let (cpu, changes) = measure(seconds: options.seconds, queue: queue, counter: counter)
    queue.sync { for token in tokens { token.cancel() } }
    return PhaseResult(countdowns: options.countdowns, cpuNanoseconds: cpu, displayedChanges: changes,
                       residentBytes: residentAfter - residentBefore)
}

/// CPU time spent and changes counted over `seconds` of wall time.
func measure(seconds: Int, queue: DispatchQueue, counter: ChangeCounter) -> (Int64, Int64) {
    let startChanges = queue.sync { counter.changes }
    let startCPU = BenchProbe.cpuNanoseconds()
    Thread.sleep(forTimeInterval: Double(seconds))
    let endChanges = queue.sync { counter.changes }
    let endCPU = BenchProbe.cpuNanoseconds()
    return (endCPU - startCPU, endChanges - startChanges)
}
