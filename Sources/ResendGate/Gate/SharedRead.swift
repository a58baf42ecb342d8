/// One Redis read shared by every caller that asks while it is in flight: the first call
/// starts it, later ones wait for its answer (at most `limit`; more fail at once with
/// `overflow`), and the next call after it answered reads again. Confined to its worker's loop.
final class SharedRead<Value> {
    private var waiting: [(Result<Value, GateError>) -> Void] = []
    /// The most calls that wait for one read (and for `WindowCooldowns`'s first read).
    static var limit: Int { 65_536 }
    private let overflow: GateError

    init(overflow: GateError) {
        self.overflow = overflow
    }

    /// Gives `done` the answer of the read in flight, or of `read`, started now.
    func run(_ done: @escaping (Result<Value, GateError>) -> Void, read: (@escaping (Result<Value, GateError>) -> Void) -> Void) {
        guard waiting.count < Self.limit else { return done(.failure(overflow)) }
        waiting.append(done)
        guard waiting.count == 1 else { return }
        read { [self] result in
            let answered = waiting
            waiting.removeAll()
            for body in answered { body(result) }
        }
    }
}
