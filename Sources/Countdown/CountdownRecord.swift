/// One started countdown inside a ``CountdownCenter``. Every field is guarded by the
/// center's lock.
final class CountdownRecord {
    let id: CountdownID
    /// When the countdown ends, on the center's monotonic clock.
    var deadline: CountdownInstant
    /// Live subscriptions; usually one, so a plain array.
    var subscribers: [SubscriptionBox] = []
    /// When the displayed value next changes.
    var nextChange: CountdownInstant
    /// The key of this record's live heap entry (its `nextChange` in nanoseconds), or nil
    /// while nobody watches.
    var heapKey: Int64?

    init(id: CountdownID, deadline: CountdownInstant) {
        self.id = id
        self.deadline = deadline
        self.nextChange = deadline
    }

    /// Nanoseconds left at `now` (negative once past).
    func remainingNanoseconds(at now: CountdownInstant) -> Int64 {
        deadline.nanoseconds &- now.nanoseconds
    }
}
