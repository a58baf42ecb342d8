import Foundation

extension CountdownCenter {
    /// Watches countdown `id`.
    ///
    /// The current event comes first (no blank first second), then each change of the
    /// displayed value, then `finished` exactly once. With a `queue` every event, the first
    /// included, is delivered there, never on the calling thread. Without one they are
    /// called inline: the first on the calling thread before this returns, later ones on
    /// the thread that drives the center. No handler runs while the center holds its lock.
    /// A countdown that is not running — never started, cancelled, or past its deadline
    /// even though nobody watched — gives `finished` at once.
    ///
    /// Subscribing again to the same id (a reused list cell) continues the same countdown.
    /// Keep the returned token: cancelling or releasing it ends this subscription only.
    public func subscribe(to id: CountdownID, on queue: DispatchQueue? = nil,
                          _ handler: @escaping @Sendable (CountdownEvent) -> Void) -> CountdownSubscription {
        let box = SubscriptionBox(id: id, queue: queue, lock: lock, handler: handler)
        register(box)
        return CountdownSubscription(box: box, center: self)
    }

    /// Watches countdown `id` for as long as `owner` lives (a view controller, a cell, a
    /// view model): the subscription ends when `owner` is deallocated — its handler is never
    /// called after that, and the center lets go of it at the countdown's next change at the
    /// latest. The handler receives the owner, so it need not capture it: no retain cycle.
    /// Events arrive as with ``subscribe(to:on:_:)``; the returned token may be ignored,
    /// or cancelled to end the subscription earlier.
    @discardableResult
    public func subscribe<Owner: AnyObject & Sendable>(
        to id: CountdownID, owner: Owner, on queue: DispatchQueue? = nil,
        _ handler: @escaping @Sendable (Owner, CountdownEvent) -> Void
    ) -> CountdownSubscription {
        let weakOwner = WeakOwner(owner)
        let box = SubscriptionBox(id: id, queue: queue, lock: lock, owner: weakOwner) { event in
            guard let owner = weakOwner.object as? Owner else { return }
            handler(owner, event)
        }
        register(box)
        return CountdownSubscription(box: box, center: self, cancelsOnDeinit: false)
    }

    /// Watches countdown `id` with a main-actor handler (a label, an `@Observable` model):
    /// every event is delivered on the main actor, so the handler may touch main-actor state
    /// directly; the first one before this returns when called there (no frame shows a stale
    /// value), the rest through the main queue. Otherwise as ``subscribe(to:on:_:)``.
    public func subscribeOnMainActor(to id: CountdownID,
                                     _ handler: @escaping @MainActor (CountdownEvent) -> Void) -> CountdownSubscription {
        subscribe(to: id, on: .main) { event in
            MainActor.assumeIsolated { handler(event) }
        }
    }

    /// ``subscribe(to:owner:on:_:)`` with a main-actor handler, delivered on the main queue.
    @discardableResult
    public func subscribeOnMainActor<Owner: AnyObject & Sendable>(
        to id: CountdownID, owner: Owner, _ handler: @escaping @MainActor (Owner, CountdownEvent) -> Void
    ) -> CountdownSubscription {
        subscribe(to: id, owner: owner, on: .main) { owner, event in
            MainActor.assumeIsolated { handler(owner, event) }
        }
    }

    /// Adds `box` to its countdown and sends it the current event: dispatched to its queue
    /// under the lock (so it precedes every later tick), or, inline, delivered after
    /// unlocking, with events for it held back until then.
    private func register(_ box: SubscriptionBox) {
        // The first event of a main-queue subscription made on the main thread is delivered
        // at once, not a turn later: a reused cell or a new screen shows its value in the
        // frame it is set up (later events still come through the queue, after it).
        let firstAtOnce = box.queue == nil || (box.queue?.label == DispatchQueue.main.label && MainQueue.isCurrent)
        var first = CountdownEvent.finished
        change { now, outbox in
            if let record = records[box.id], record.remainingNanoseconds(at: now) > 0 {
                let value = CountdownValue(remainingNanoseconds: record.remainingNanoseconds(at: now))
                first = .value(value)
                box.lastShown = value.totalSeconds
                box.isRegistered = true
                record.subscribers.append(box)
            }
            if !firstAtOnce {
                outbox.add(box, first)
            } else if box.queue == nil {
                box.holdsEvents = true
            }
            if let record = records[box.id] {
                if box.isRegistered { refresh(record, at: now, into: &outbox) } else { finish(record, into: &outbox) }
            }
        }
        if box.queue == nil { box.deliverFirst(first) } else if firstAtOnce { box.deliver(first) }
    }

    /// Removes `box` from its countdown; stops the timer if nobody is left watching anything.
    func unsubscribe(_ box: SubscriptionBox) {
        lock.lock()
        defer { lock.unlock() }
        box.handler = nil
        box.held.removeAll()
        guard box.isRegistered else { return }
        box.isRegistered = false
        if let record = records[box.id], let index = record.subscribers.firstIndex(where: { $0 === box }) {
            record.subscribers.remove(at: index)
            if record.subscribers.isEmpty { heap.file(record, key: nil) }
        }
        rearm()
    }
}

/// Whether the caller runs on the main queue (the main actor's executor). Not
/// `Thread.isMainThread`: on Linux another thread may drain the main queue.
enum MainQueue {
    private static let key = DispatchSpecificKey<UInt8>()
    private static let marked: Void = DispatchQueue.main.setSpecific(key: key, value: 1)

    static var isCurrent: Bool {
        _ = marked
        return DispatchQueue.getSpecific(key: key) == 1
    }
}
