import Countdown
import Foundation

/// Collects the events a subscription receives, from any thread.
final class EventRecorder: @unchecked Sendable {
    // @unchecked: `recorded` is guarded by `lock`.
    private let lock = NSLock()
    private var recorded: [CountdownEvent] = []

    var events: [CountdownEvent] { lock.withLock { recorded } }

    /// The values received, in seconds, `finished` written as -1.
    var seconds: [Int64] {
        events.map { event in
            switch event {
            case .value(let value): value.totalSeconds
            case .finished: -1
            }
        }
    }

    func record(_ event: CountdownEvent) {
        lock.withLock { recorded.append(event) }
    }

    func subscribe(_ center: CountdownCenter, to id: CountdownID, on queue: DispatchQueue? = nil) -> CountdownSubscription {
        center.subscribe(to: id, on: queue) { [self] event in record(event) }
    }
}

/// A center on a fresh virtual clock.
func makeVirtualCenter(tolerance: Duration = .milliseconds(50)) -> (CountdownCenter, VirtualClock) {
    let clock = VirtualClock()
    return (CountdownCenter(clock: clock, scheduler: clock, tolerance: tolerance), clock)
}
