import Foundation

extension CountdownCenter {
    // MARK: - Start

    /// Starts (or restarts) countdown `id` with `remaining` time left as measured at
    /// `measuredAt` — for a server reply, the instant it arrived and its `retry_after_ms`.
    /// Defaults to now.
    public func start(_ id: CountdownID, remaining: Duration, measuredAt: CountdownInstant? = nil) {
        start(id, deadline: (measuredAt ?? clock.now).advanced(by: remaining))
    }

    /// Starts (or restarts) countdown `id` ending at `deadline` on the monotonic clock.
    /// Subscribers already watching `id` see the new value at once; a deadline already
    /// passed finishes it.
    public func start(_ id: CountdownID, deadline: CountdownInstant) {
        change { now, outbox in
            let record = records[id] ?? CountdownRecord(id: id, deadline: deadline)
            records[id] = record
            record.deadline = deadline
            if deadline <= now {
                finish(record, into: &outbox)
            } else if !record.subscribers.isEmpty {
                refresh(record, at: now, into: &outbox)
            }
        }
    }

    /// Starts (or restarts) countdown `id` ending at a wall-clock `wallClockDeadline` (a
    /// parsed ``CountdownDeadline``). Converted to the monotonic clock once, here; later
    /// wall-clock changes do not move it. It trusts the device's clock: for a server's
    /// deadline use ``start(_:deadline:)`` with the answer's arrival plus its time left
    /// (the client kit's `ServerCountdown.deadline`), which is right however wrong that clock is.
    public func start(_ id: CountdownID, wallClockDeadline: Date) {
        start(id, deadline: monotonicInstant(for: wallClockDeadline))
    }

    // MARK: - Extend, cancel

    /// Adds `extra` to countdown `id`; if none is running, starts one lasting `extra` from now.
    public func extend(_ id: CountdownID, by extra: Duration) {
        change { now, outbox in
            if let record = records[id], record.deadline > now {
                record.deadline = record.deadline.advanced(by: extra)
                if record.deadline <= now {
                    finish(record, into: &outbox)
                } else if !record.subscribers.isEmpty {
                    refresh(record, at: now, into: &outbox)
                }
            } else if extra > .zero {
                records[id] = CountdownRecord(id: id, deadline: now.advanced(by: extra))
            }
        }
    }

    /// Ends countdown `id` now, as if its deadline had passed (the cooldown was released):
    /// its subscribers get `finished`. Does nothing if it is not running.
    public func cancel(_ id: CountdownID) {
        change { _, outbox in
            if let record = records[id] { finish(record, into: &outbox) }
        }
    }

    // MARK: - Save, restore

    /// The saved form of countdown `id`, or nil when it is not running.
    public func state(of id: CountdownID) -> CountdownState? {
        lock.withLock {
            let now = clock.now
            guard let record = records[id], record.deadline > now else { return nil }
            return CountdownState(id: id, deadline: wallClockDate(for: record.deadline, now: now))
        }
    }

    /// The saved form of every running countdown, by id.
    public func states() -> [CountdownState] {
        lock.withLock {
            let now = clock.now
            return records.values.filter { $0.deadline > now }
                .map { CountdownState(id: $0.id, deadline: wallClockDate(for: $0.deadline, now: now)) }
                .sorted { $0.id.rawValue < $1.id.rawValue }
        }
    }

    /// Carries on a saved countdown after relaunch: its wall-clock deadline is converted to
    /// the monotonic clock once. One whose deadline passed while the app was gone finishes
    /// (a later subscriber gets `finished`).
    public func restore(_ state: CountdownState) {
        start(state.id, wallClockDeadline: state.deadline)
    }

    /// What a subscriber to `id` would be shown now, without subscribing.
    public func currentEvent(for id: CountdownID) -> CountdownEvent {
        lock.withLock {
            guard let record = records[id] else { return .finished }
            let value = CountdownValue(remainingNanoseconds: record.remainingNanoseconds(at: clock.now))
            return value.isZero ? .finished : .value(value)
        }
    }

    // MARK: - Helpers

    /// Runs `body` with the lock held, re-arms the timer, then sends what it produced.
    func change(_ body: (CountdownInstant, inout Outbox) -> Void) {
        lock.lock()
        var outbox = Outbox()
        body(clock.now, &outbox)
        rearm()
        outbox.sendQueued()
        lock.unlock()
        outbox.sendInline()
    }

    private func monotonicInstant(for wallClockDeadline: Date) -> CountdownInstant {
        let seconds = wallClockDeadline.timeIntervalSince(clock.wallNow)
        let nanoseconds = (seconds * 1e9).rounded()
        let clamped = max(-9.2e18, min(9.2e18, nanoseconds))
        return clock.now.advanced(by: .nanoseconds(Int64(clamped)))
    }

    private func wallClockDate(for deadline: CountdownInstant, now: CountdownInstant) -> Date {
        clock.wallNow.addingTimeInterval(Double(now.duration(to: deadline).countdownNanoseconds) / 1e9)
    }
}
