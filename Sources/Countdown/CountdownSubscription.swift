import Foundation

/// The token ``CountdownCenter/subscribe(to:on:_:)`` returns. Cancel it (or let it go) to
/// stop receiving events; other subscriptions, even to the same countdown, carry on.
///
/// Cancelling drops the center's reference to your handler at once, so nothing retains the
/// subscriber afterwards; an event already queued for it is discarded. A handler running
/// on another thread at that moment may still finish.
public final class CountdownSubscription: Sendable {
    /// The countdown this subscription watches.
    public var id: CountdownID { box.id }

    let box: SubscriptionBox
    private let center: CountdownCenter

    init(box: SubscriptionBox, center: CountdownCenter) {
        self.box = box
        self.center = center
    }

    /// Stops this subscription. Safe to call more than once and from any thread.
    public func cancel() {
        center.unsubscribe(box)
    }

    /// True until the subscription is cancelled or has received `finished`.
    public var isActive: Bool {
        center.lock.withLock { box.handler != nil }
    }

    deinit {
        center.unsubscribe(box)
    }
}

/// The center's side of a subscription. Every mutable field is guarded by the center's lock.
final class SubscriptionBox: @unchecked Sendable {
    // @unchecked: `handler`, `lastShown` and `isRegistered` are only touched with `lock` held.
    let id: CountdownID
    let queue: DispatchQueue?
    let lock: NSRecursiveLock
    var handler: (@Sendable (CountdownEvent) -> Void)?
    /// Total seconds last sent, so a value is never sent twice.
    var lastShown: Int64 = -1
    /// Whether the box is in its record's subscriber list.
    var isRegistered = false

    init(id: CountdownID, queue: DispatchQueue?, lock: NSRecursiveLock,
         handler: @escaping @Sendable (CountdownEvent) -> Void) {
        self.id = id
        self.queue = queue
        self.lock = lock
        self.handler = handler
    }

    /// Calls the handler unless the subscription was cancelled meanwhile; `finished` is the
    /// last event, so it also lets go of the handler.
    func deliver(_ event: CountdownEvent) {
        lock.lock()
        let handler = self.handler
        if event == .finished { self.handler = nil }
        lock.unlock()
        handler?(event)
    }
}
