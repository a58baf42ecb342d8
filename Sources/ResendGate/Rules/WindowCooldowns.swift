import GateEventLoop
import RedisClient

/// Keeps gates of different policies for one purpose from missing each other's cooldowns.
/// A policy with a window may keep a running cooldown in its window key (`reserve.lua`),
/// which a plain cooldown's `SET <cooldown key> NX` does not read. So while a purpose's
/// policy changes (a rolling change, or cooldowns still running after it), a plain gate
/// must decide with the reserve script, which reads both keys.
///
/// Every `period` each gate announces in `<prefix>:window-cooldowns` the purposes it keeps
/// in windows, each until its longest cooldown would end plus three periods, and reads
/// what every gate announced (`window-cooldowns.lua`).
/// - A plain gate takes `SET NX` only with a read at most two periods old that names no
///   gate keeping the purpose in windows.
/// - A gate keeps cooldowns in windows only once its first announcement is two periods old
///   (every plain gate has read it since), and while its last is at most two periods old.
/// Confined to the worker's loop.
final class WindowCooldowns {
    private let store: any GateStore
    private let key: String
    private let period: Duration
    /// How old a read may be; made once, as `Duration * Int` is generic and asked per decision.
    private let twoPeriods: Duration
    /// `purpose, ms, …`: what this gate announces (empty: it keeps none in windows).
    private let announced: [String]
    private let loop: EventLoop
    private var timer: EventTimer?
    /// The last read (with this gate's announcement): when it was sent, so its age is never
    /// understated, and until when some gate keeps each purpose in windows (this gate's clock).
    private var lastRead: (at: ContinuousClock.Instant, runningUntil: [String: ContinuousClock.Instant])?
    /// When this gate may keep cooldowns in windows: two periods after its first announcement
    /// or its first after a gap of over two periods (a plain gate may have read without it).
    private var windowsFrom: ContinuousClock.Instant?
    private var closed = false
    /// Decisions waiting for the first read (`waitForFirstRead`); nil once it was answered.
    private var waiting: [() -> Void]? = []

    /// `windowed`: the purposes this gate keeps in windows, with their longest hold in ms.
    init(
        loop: EventLoop, store: any GateStore, key: String, period: Duration,
        windowed: [(purpose: String, longestMilliseconds: Int64)]
    ) {
        self.loop = loop
        self.store = store
        self.key = key
        self.period = period
        self.twoPeriods = period * 2
        let margin = 3 * Int64(period / .milliseconds(1))
        announced = windowed.sorted { $0.purpose < $1.purpose }.flatMap { [$0.purpose, String($0.longestMilliseconds + margin)] }
    }

    /// Whether the registry's first read was answered (or failed).
    var firstReadAnswered: Bool { waiting == nil }

    /// Runs `body` once the first read is answered, so a plain gate's first decisions need
    /// not take the script; false, without keeping it, when `SharedRead.limit` wait already.
    func waitForFirstRead(_ body: @escaping () -> Void) -> Bool {
        guard let count = waiting?.count, count < SharedRead<Void>.limit else { return false }
        waiting!.append(body)
        return true
    }

    /// Whether `purpose`'s plain cooldown may decide with `SET NX` now.
    func plainDecisionIsSafe(for purpose: String) -> Bool {
        let now = ContinuousClock.now
        guard let lastRead, now - lastRead.at <= twoPeriods else { return false }
        return lastRead.runningUntil[purpose].map { $0 <= now } ?? true
    }

    /// Whether this gate may keep cooldowns in window keys now.
    func keepsCooldownsInWindows() -> Bool {
        guard !announced.isEmpty, let windowsFrom, let lastRead else { return false }
        let now = ContinuousClock.now
        return windowsFrom <= now && now - lastRead.at <= twoPeriods
    }

    /// Stops the announcements.
    func close() {
        closed = true
        timer?.cancel()
    }

    /// Starts the announcements (the worker does at once); idempotent.
    func start() {
        guard timer == nil, !closed else { return }
        timer = EventTimer(loop: loop) { [unowned self] in self.announce() }
        announce()
    }

    private func announce() {
        let key = self.key, announced = self.announced
        let sent = ContinuousClock.now
        let call = ScriptCall(script: GateScripts.windowCooldowns, slotKey: key, arguments: { args in
            args.append(1, key)
            for part in announced { args.append(part) }
        }, decode: { reply throws(GateError) in
            let now = ContinuousClock.now
            guard let read = Self.read(reply, at: now) else { throw GateContext.unexpected(reply) }
            return (now: now, read: read)
        })
        store.run(call) { [unowned self] result in
            // A failed read leaves the last one, which goes stale in two periods.
            if case .success(let (now, read)) = result {
                if self.lastRead.map({ sent - $0.at > self.twoPeriods }) ?? true { self.windowsFrom = now + self.twoPeriods }
                self.lastRead = (sent, read)
            }
            if !self.closed { self.timer?.schedule(after: self.period) }
            if let waiting = self.waiting {
                self.waiting = nil
                for body in waiting { body() }
            }
        }
    }

    /// `{Redis's ms now, purpose, ms, …}` as instants of this gate's clock (`now` when it came).
    static func read(_ reply: RedisReply, at now: ContinuousClock.Instant) -> [String: ContinuousClock.Instant]? {
        guard case .array(let items) = reply, let redisNow = items.first?.integer, items.count % 2 == 1 else { return nil }
        var running: [String: ContinuousClock.Instant] = [:]
        for index in stride(from: 1, to: items.count, by: 2) {
            guard let purpose = items[index].string, let ends = items[index + 1].string.flatMap({ Int64($0) }) else { return nil }
            running[purpose] = now + .milliseconds(ends - Int64(redisNow))
        }
        return running
    }
}
