import Foundation

extension CountdownCenter {
    /// Watches countdown `id`.
    ///
    /// The current event is delivered **before this returns**, on the calling thread (no
    /// blank first second; subscribe from the callback queue, e.g. main, to keep every call
    /// there). After that `handler` gets each change of the displayed value, on `queue`
    /// (inline on the ticking thread when nil), then `finished` exactly once. A countdown
    /// that is not running — never started, cancelled, or past its deadline even though
    /// nobody watched — gives `finished` at once.
    ///
    /// Subscribing again to the same id (a reused list cell) continues the same countdown.
    /// Keep the returned token: cancelling or releasing it ends this subscription only.
    public func subscribe(to id: CountdownID, on queue: DispatchQueue? = nil,
                          _ handler: @escaping @Sendable (CountdownEvent) -> Void) -> CountdownSubscription {
        let box = SubscriptionBox(id: id, queue: queue, lock: lock, handler: handler)
        // Held while the first event is delivered, so no tick on another thread can reach
        // this subscriber before it; recursive, so the handler may call back in.
        lock.lock()
        defer { lock.unlock() }
        let now = clock.now
        var outbox = Outbox()
        let first: CountdownEvent
        if let record = records[id], record.remainingNanoseconds(at: now) > 0 {
            let value = CountdownValue(remainingNanoseconds: record.remainingNanoseconds(at: now))
            box.lastShown = value.totalSeconds
            box.isRegistered = true
            record.subscribers.append(box)
            refresh(record, at: now, into: &outbox)
            first = .value(value)
        } else {
            if let record = records[id] { finish(record, into: &outbox) }
            first = .finished
        }
        rearm()
        outbox.sendQueued()
        box.deliver(first)
        outbox.sendInline()
        return CountdownSubscription(box: box, center: self)
    }

    /// Removes `box` from its countdown; stops the timer if nobody is left watching anything.
    func unsubscribe(_ box: SubscriptionBox) {
        lock.lock()
        defer { lock.unlock() }
        box.handler = nil
        guard box.isRegistered else { return }
        box.isRegistered = false
        if let record = records[box.id], let index = record.subscribers.firstIndex(where: { $0 === box }) {
            record.subscribers.remove(at: index)
            if record.subscribers.isEmpty { heap.file(record, key: nil) }
        }
        rearm()
    }
}
