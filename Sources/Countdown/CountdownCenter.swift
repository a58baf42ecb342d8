import Foundation

/// One shared ticker for any number of countdowns.
///
/// It wakes only when some subscriber's displayed value changes — at the earliest
/// whole-second boundary among them, found in a heap keyed by each countdown's next change
/// — and coalesces wake-ups that fall within ``tolerance`` of the previous one, so its cost
/// grows with displayed changes, not with countdowns × ticks. With nobody subscribed it
/// holds no timer at all.
///
/// Safe to use from any thread. Events go to the queue each subscription names or, with
/// none, are called inline on the thread that drives the center (the scheduler's, or the
/// caller of `subscribe`/`start`/`extend`/`cancel`) — the mode for an event loop that owns
/// its center. No handler is ever called while the center holds its lock, so a handler may
/// block on another queue (`DispatchQueue.main.sync`) or call back into the center:
///
/// ```swift
/// // One center per event-loop worker: the loop's timer is the scheduler (the server's
/// // LoopCountdownScheduler arms one libevent timer for clock.now.duration(to: instant)
/// // and calls `fire` from the loop's callback; events then arrive inline on the loop).
/// let center = CountdownCenter(clock: SystemCountdownClock(), scheduler: loopScheduler)
/// ```
public final class CountdownCenter: @unchecked Sendable {
    // @unchecked: all mutable state below is guarded by `lock`.

    /// The clock every displayed value is computed from.
    public let clock: any CountdownClock
    /// What wakes the center.
    public let scheduler: any CountdownScheduler
    /// Wake-ups closer together than this are merged into the later one; a displayed change
    /// may thus show up to this late (never early, so 0 is never shown while time remains).
    public let tolerance: Duration

    /// Recursive so that a handler called during `subscribe` may call back into the center.
    let lock = NSRecursiveLock()
    var records: [CountdownID: CountdownRecord] = [:]
    var heap = CountdownHeap()
    private var wakeUp: (any CountdownWakeUp)?
    private var wakeUpAt: CountdownInstant?
    private var wakeUpGeneration: UInt64 = 0
    private var lastWakeUp: CountdownInstant?

    /// Makes a center reading `clock` and woken by `scheduler` (which must measure the same clock).
    public init(clock: any CountdownClock, scheduler: any CountdownScheduler,
                tolerance: Duration = .milliseconds(50)) {
        self.clock = clock
        self.scheduler = scheduler
        self.tolerance = max(.zero, tolerance)
    }

    /// Makes a production center: ``SystemCountdownClock`` and a ``DispatchCountdownScheduler``
    /// ticking on `queue`.
    public convenience init(queue: DispatchQueue = DispatchQueue(label: "resendgate.countdown.ticker"),
                            tolerance: Duration = .milliseconds(50)) {
        self.init(clock: SystemCountdownClock(), scheduler: DispatchCountdownScheduler(queue: queue),
                  tolerance: tolerance)
    }

    /// The app's one center on the system clock: every model, screen and list cell that
    /// shows a countdown can share it, so one timer ticks them all (seed 004's point).
    public static let shared = CountdownCenter()

    /// Whether a wake-up is pending (false whenever nobody is subscribed).
    public var isTicking: Bool {
        lock.withLock { wakeUp != nil }
    }

    /// How many countdowns have at least one subscriber.
    public var watchedCount: Int {
        lock.withLock { heap.liveCount }
    }

    // MARK: - Ticking (lock held unless noted)

    /// The scheduler's callback: sends every changed value, then re-arms.
    private func wake(generation: UInt64) {
        change { now, outbox in
            guard generation == wakeUpGeneration else { return }  // a later wake-up replaced it
            wakeUp = nil
            wakeUpAt = nil
            lastWakeUp = now
            while let next = heap.top(), next.key <= now.nanoseconds {
                let record = next.record
                if update(record, at: now, into: &outbox) {
                    heap.rekeyTop(next, to: record.nextChange.nanoseconds)
                } else {
                    heap.file(record, key: nil)
                }
            }
        }
    }

    /// Sends `record`'s subscribers its value at `now` if it changed for them, finishes it
    /// if no time remains, and files it in the heap under its next change.
    func refresh(_ record: CountdownRecord, at now: CountdownInstant, into outbox: inout Outbox) {
        if update(record, at: now, into: &outbox) {
            heap.file(record, key: record.nextChange.nanoseconds)
        }
    }

    /// Sends `record`'s subscribers its value at `now` if it changed for them and sets its
    /// next change; finishes it if no time remains. True if it is still watched.
    private func update(_ record: CountdownRecord, at now: CountdownInstant, into outbox: inout Outbox) -> Bool {
        let remaining = record.remainingNanoseconds(at: now)
        guard remaining > 0 else {
            finish(record, into: &outbox)
            return false
        }
        dropOrphans(of: record)
        let shown = CountdownValue(remainingNanoseconds: remaining).totalSeconds
        for box in record.subscribers where box.lastShown != shown {
            box.lastShown = shown
            outbox.add(box, .value(CountdownValue(totalSeconds: shown)))
        }
        // The value drops to shown - 1 when exactly (shown - 1) seconds remain.
        record.nextChange = CountdownInstant(nanoseconds: record.deadline.nanoseconds &- (shown - 1) &* 1_000_000_000)
        if record.subscribers.isEmpty {
            heap.file(record, key: nil)
            return false
        }
        return true
    }

    /// Ends the subscriptions of `record` whose owner was deallocated (they get no event).
    func dropOrphans(of record: CountdownRecord) {
        guard record.subscribers.contains(where: { $0.owner != nil && $0.isOwnerGone }) else { return }
        record.subscribers.removeAll { box in
            guard box.isOwnerGone else { return false }
            box.isRegistered = false
            box.handler = nil
            box.held.removeAll()
            return true
        }
    }

    /// Ends `record`: forgets it and sends `finished` to each of its subscribers, once.
    func finish(_ record: CountdownRecord, into outbox: inout Outbox) {
        heap.file(record, key: nil)
        if records[record.id] === record { records[record.id] = nil }
        dropOrphans(of: record)
        for box in record.subscribers {
            box.isRegistered = false
            outbox.add(box, .finished)
        }
        record.subscribers = []
    }

    /// Asks the scheduler for the next wake-up the heap needs, or drops the timer when the
    /// heap is empty. Keeps an earlier pending wake-up rather than churn the timer.
    func rearm() {
        guard let next = heap.top() else {
            wakeUp?.cancel()
            wakeUp = nil
            wakeUpAt = nil
            return
        }
        var target = CountdownInstant(nanoseconds: next.key)
        if let last = lastWakeUp {
            target = max(target, last.advanced(by: tolerance))
        }
        if wakeUp != nil, let pending = wakeUpAt, pending <= target { return }
        wakeUp?.cancel()
        wakeUpGeneration &+= 1
        let generation = wakeUpGeneration
        wakeUpAt = target
        wakeUp = scheduler.schedule(at: target) { [weak self] in
            self?.wake(generation: generation)
        }
    }
}

/// Events gathered while the lock is held. Those for a queue are dispatched in order before
/// unlocking (so each queue sees them in the order the state changed; dispatching never
/// runs a handler); those without a queue are called after unlocking (or held back for a
/// subscription whose first value is still on its way). No handler ever runs while the
/// center's lock is held.
struct Outbox {
    private var inline: [(SubscriptionBox, CountdownEvent)] = []
    private var queued: [ObjectIdentifier: (DispatchQueue, [(SubscriptionBox, CountdownEvent)])] = [:]

    mutating func add(_ box: SubscriptionBox, _ event: CountdownEvent) {
        if let queue = box.queue {
            queued[ObjectIdentifier(queue), default: (queue, [])].1.append((box, event))
        } else if box.holdsEvents {
            box.held.append(event)
        } else {
            inline.append((box, event))
        }
    }

    func sendQueued() {
        for (queue, events) in queued.values {
            let batch = QueuedBatch(events: events)
            queue.async { batch.send() }
        }
    }

    /// Call with the lock released.
    func sendInline() {
        for (box, event) in inline { box.deliver(event) }
    }
}

/// A batch of events bound for one queue.
private struct QueuedBatch: @unchecked Sendable {
    // @unchecked: tuples of Sendable values; the array is never mutated after creation.
    let events: [(SubscriptionBox, CountdownEvent)]

    func send() {
        for (box, event) in events { box.deliver(event) }
    }
}
