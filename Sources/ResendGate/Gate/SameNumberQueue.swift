/// On a Redis Cluster, runs one number's decisions one after another on a worker, so the
/// shares its steps take outside its slot (budgets, the pumping guard's count) and
/// given back on a refusal are held for one request at a time: a flood of refused requests
/// for one number cannot fill a budget or close a prefix for everyone else. Bounded by the
/// requests in flight; confined to the worker's loop.
final class SameNumberQueue {
    private var waiting: [String: [() -> Void]] = [:]

    /// Runs `body` now when no decision of `key` is running (or `queued` is false), else
    /// after those before it; `body` calls `done` once its decision has queued its last command.
    func run(_ key: String, if queued: Bool = true, _ body: @escaping (_ done: @escaping () -> Void) -> Void) {
        guard queued else { return body {} }
        let start = { [unowned self] in body { self.finish(key) } }
        guard waiting[key] == nil else { return waiting[key]!.append(start) }
        waiting[key] = []
        start()
    }

    /// Numbers with a decision running (for tests: the table empties).
    var running: Int { waiting.count }

    private func finish(_ key: String) {
        guard let next = waiting[key]?.first else {
            waiting[key] = nil
            return
        }
        waiting[key]?.removeFirst()
        next()
    }
}
