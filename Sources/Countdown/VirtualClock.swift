import Foundation

/// A clock and scheduler in one, for tests: time moves only when you call ``advance(by:)``,
/// and wake-ups fire then, in order, each at exactly its own instant. Nothing sleeps.
///
/// Public so that other modules' tests (the server's SSE stream, thin clients) can drive a
/// ``CountdownCenter`` the same way: `CountdownCenter(clock: clock, scheduler: clock)`.
public final class VirtualClock: CountdownClock, CountdownScheduler, @unchecked Sendable {
    // @unchecked: every stored property is guarded by `lock`.
    private let lock = NSLock()
    private var monotonic: CountdownInstant
    private var wall: Date
    private var pending: [Pending] = []
    private var nextSerial: UInt64 = 0
    private var fired = 0

    private struct Pending {
        let serial: UInt64
        let instant: CountdownInstant
        let fire: @Sendable () -> Void
    }

    /// Makes a clock reading `now` on the monotonic timeline and `wallNow` on the wall clock.
    public init(now: CountdownInstant = CountdownInstant(nanoseconds: 0),
                wallNow: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        self.monotonic = now
        self.wall = wallNow
    }

    public var now: CountdownInstant { lock.withLock { monotonic } }

    public var wallNow: Date { lock.withLock { wall } }

    /// Wake-ups scheduled and neither fired nor cancelled (0 means the ticker is stopped).
    public var pendingWakeUps: Int { lock.withLock { pending.count } }

    /// Wake-ups fired so far.
    public var firedWakeUps: Int { lock.withLock { fired } }

    /// Moves time forward by `duration`, firing every wake-up due on the way at its own
    /// instant (including ones scheduled by those firings). The wall clock moves along.
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves time forward to `target` (never backwards), firing due wake-ups in order.
    public func advance(to target: CountdownInstant) {
        while true {
            let due: Pending? = lock.withLock {
                guard let index = pending.indices.min(by: { pending[$0].instant < pending[$1].instant
                    || (pending[$0].instant == pending[$1].instant && pending[$0].serial < pending[$1].serial) }),
                      pending[index].instant <= target
                else {
                    moveTo(target)
                    return nil
                }
                let next = pending.remove(at: index)
                moveTo(next.instant)
                fired += 1
                return next
            }
            guard let due else { return }
            due.fire()
        }
    }

    /// Sets the wall clock, as a user or NTP would. The monotonic time does not move.
    public func setWallClock(_ date: Date) {
        lock.withLock { wall = date }
    }

    public func schedule(at instant: CountdownInstant, _ fire: @escaping @Sendable () -> Void) -> any CountdownWakeUp {
        lock.withLock {
            nextSerial += 1
            pending.append(Pending(serial: nextSerial, instant: instant, fire: fire))
            return VirtualWakeUp(clock: self, serial: nextSerial)
        }
    }

    fileprivate func cancel(serial: UInt64) {
        lock.withLock { pending.removeAll { $0.serial == serial } }
    }

    /// Moves both clocks to `instant` if it is later. Call with `lock` held.
    private func moveTo(_ instant: CountdownInstant) {
        guard instant > monotonic else { return }
        wall += Double(monotonic.duration(to: instant).countdownNanoseconds) / 1e9
        monotonic = instant
    }
}

private struct VirtualWakeUp: CountdownWakeUp {
    let clock: VirtualClock
    let serial: UInt64

    func cancel() {
        clock.cancel(serial: serial)
    }
}
