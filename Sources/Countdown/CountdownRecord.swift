/// One started countdown inside a ``CountdownCenter``. Every field is guarded by the
/// center's lock.
final class CountdownRecord {
    let id: CountdownID
    /// When the countdown ends, on the center's monotonic clock.
    var deadline: CountdownInstant
    /// Live subscriptions; usually one, so a plain array.
    var subscribers: [SubscriptionBox] = []
    /// When the displayed value next changes; the heap's key while subscribed.
    var nextChange: CountdownInstant
    /// Position in the center's heap, or -1 while nobody watches.
    var heapIndex = -1

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
