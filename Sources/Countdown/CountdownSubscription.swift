import Foundation

/// The token ``CountdownCenter/subscribe(to:on:_:)`` returns. Cancel it (or let it go) to
/// stop receiving events; other subscriptions, even to the same countdown, carry on.
///
/// Cancelling drops the center's reference to your handler at once, so nothing retains the
/// subscriber afterwards; an event already queued for it is discarded. A handler running
/// on another thread at that moment may still finish.
///
/// A subscription tied to an owner (``CountdownCenter/subscribe(to:owner:on:_:)``) is not
/// cancelled when its token is let go: the owner's life bounds it instead.
public final class CountdownSubscription: Sendable {
    /// The countdown this subscription watches.
    public var id: CountdownID { box.id }

    let box: SubscriptionBox
    private let center: CountdownCenter
    private let cancelsOnDeinit: Bool

    init(box: SubscriptionBox, center: CountdownCenter, cancelsOnDeinit: Bool = true) {
        self.box = box
        self.center = center
        self.cancelsOnDeinit = cancelsOnDeinit
    }

    /// Stops this subscription. Safe to call more than once and from any thread.
    public func cancel() {
        center.unsubscribe(box)
    }

    /// True until the subscription is cancelled, has received `finished`, or lost its owner.
    public var isActive: Bool {
        center.lock.withLock { box.handler != nil && !box.isOwnerGone }
    }

    deinit {
        if cancelsOnDeinit { center.unsubscribe(box) }
    }
}

/// A weak reference to a subscription's owner, shared by its box and its handler.
final class WeakOwner: @unchecked Sendable {
    // @unchecked: a weak reference is read and cleared atomically by the runtime.
    weak var object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }
}

/// The center's side of a subscription. Every mutable field is guarded by the center's lock.
final class SubscriptionBox: @unchecked Sendable {
    // @unchecked: every `var` below is only touched with `lock` held.
    let id: CountdownID
    let queue: DispatchQueue?
    let lock: NSRecursiveLock
    /// The owner whose life bounds this subscription, if it has one.
    let owner: WeakOwner?
    var handler: (@Sendable (CountdownEvent) -> Void)?
    /// Total seconds last sent, so a value is never sent twice.
    var lastShown: Int64 = -1
    /// Whether the box is in its record's subscriber list.
    var isRegistered = false
    /// True while a subscription without a queue waits for its first value to be delivered
    /// (after the lock is released): events for it meanwhile wait in ``held``, so it never
    /// sees a tick from another thread before its first value.
    var holdsEvents = false
    /// Events held back while ``holdsEvents`` (rarely any; empty arrays allocate nothing).
    var held: [CountdownEvent] = []

    init(id: CountdownID, queue: DispatchQueue?, lock: NSRecursiveLock, owner: WeakOwner? = nil,
         handler: @escaping @Sendable (CountdownEvent) -> Void) {
        self.id = id
        self.queue = queue
        self.lock = lock
        self.owner = owner
        self.handler = handler
    }

    /// True once an owned subscription's owner was deallocated.
    var isOwnerGone: Bool { owner.map { $0.object == nil } ?? false }

    /// Calls the handler unless the subscription was cancelled meanwhile; `finished` is the
    /// last event, so it also lets go of the handler. Never called with the lock held.
    func deliver(_ event: CountdownEvent) {
        lock.lock()
        let handler = self.handler
        if event == .finished { self.handler = nil }
        lock.unlock()
        handler?(event)
    }

    /// Delivers the first value of a subscription without a queue, then whatever was held
    /// back meanwhile, in order, each with the lock released. Called once, by `subscribe`.
    func deliverFirst(_ first: CountdownEvent) {
        deliver(first)
        while true {
            lock.lock()
            if held.isEmpty {
                holdsEvents = false
                return lock.unlock()
            }
            let batch = held
            held = []
            lock.unlock()
            for event in batch { deliver(event) }
        }
    }
}
