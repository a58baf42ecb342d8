import Dispatch

/// What a reusable view (a list cell) holds to show one countdown at a time: binding it to
/// another countdown ends the old one's updates first, so a reused cell never shows the
/// countdown of the row it showed before. Main-actor: bind from the view's set-up, and the
/// first value arrives before `bind` returns. Freeing the binding ends its updates too.
@MainActor
public final class CountdownBinding {
    private var subscription: CountdownSubscription?

    /// The countdown shown now, nil when unbound.
    public private(set) var id: CountdownID?

    public init() {}

    /// Shows countdown `id` of `center` through `handler` (its value at once, then each
    /// change, then `finished`), ending whatever this binding showed before.
    public func bind(to id: CountdownID, in center: CountdownCenter = .shared,
                     _ handler: @escaping @MainActor (CountdownEvent) -> Void) {
        subscription?.cancel()
        self.id = id
        subscription = center.subscribeOnMainActor(to: id, handler)
    }

    /// Shows countdown `id` as ``bind(to:in:_:)`` does, the handler receiving `owner` (the
    /// cell) instead of capturing it: a cell holds its binding, so a handler that captured
    /// the cell would keep it alive until `unbind` (a retain cycle); with `owner`, a freed
    /// cell gets no more updates and the center lets go at the countdown's next change.
    public func bind<Owner: AnyObject & Sendable>(to id: CountdownID, in center: CountdownCenter = .shared, owner: Owner,
                                                  _ handler: @escaping @MainActor (Owner, CountdownEvent) -> Void) {
        subscription?.cancel()
        self.id = id
        subscription = center.subscribeOnMainActor(to: id, owner: owner, handler)
    }

    /// Ends the updates (the view left the screen, or `prepareForReuse`).
    public func unbind() {
        subscription?.cancel()
        subscription = nil
        id = nil
    }
}
