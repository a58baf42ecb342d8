import Countdown

/// The server-sent events of one countdown, apart from HTTP: the worker's
/// ``CountdownCenter``'s events as SSE frames (a `tick` at once and at each whole second,
/// then `done`), handed to `send` with whether it is the last (never dropped), then `finish`.
///
/// `@unchecked`: loop-confined (the worker's center delivers inline on its loop); the
/// handler type is `@Sendable` because other centers deliver on other threads.
final class CountdownEventSource: @unchecked Sendable {
    let countdownID: CountdownID
    let deadline: CountdownInstant
    private let center: CountdownCenter
    private let send: (_ frame: [UInt8], _ final: Bool) -> Void
    private let finish: () -> Void
    private var subscription: CountdownSubscription?
    /// True once `done` was sent or the source was cancelled.
    private(set) var isOver = false

    /// `countdownID` must be this stream's own: cancelling forgets the countdown.
    init(center: CountdownCenter, countdownID: CountdownID, deadline: CountdownInstant,
         send: @escaping (_ frame: [UInt8], _ final: Bool) -> Void, finish: @escaping () -> Void) {
        self.center = center
        self.countdownID = countdownID
        self.deadline = deadline
        self.send = send
        self.finish = finish
    }

    /// Starts the countdown and sends the first tick (or `done`, if it is past) before returning.
    func start() {
        center.start(countdownID, deadline: deadline)
        let subscription = center.subscribe(to: countdownID) { [self] event in self.deliver(event) }
        if isOver { subscription.cancel() } else { self.subscription = subscription }
    }

    /// The client went away: stop watching and forget the countdown. Sends nothing.
    func cancel() {
        guard !isOver else { return }
        isOver = true
        subscription?.cancel()
        subscription = nil
        center.cancel(countdownID)  // nobody subscribes to this stream's own id any more
    }

    /// The cooldown ended early (a release, on any gate): `done` carrying `reason` and
    /// `finish` at once. Nothing once the stream is over.
    func end(reason: String) {
        guard !isOver else { return }
        cancel()
        send(Self.done(reason: reason), true)
        finish()
    }

    private func deliver(_ event: CountdownEvent) {
        guard !isOver else { return }
        switch event {
        case .value(let value):
            let remaining = center.clock.now.duration(to: deadline)
            send(Self.tick(value, remaining: remaining), false)
        case .finished:
            isOver = true
            subscription = nil
            send(Self.done, true)
            finish()
        }
    }

    // MARK: - Frames

    /// `event: tick`, kept consistent: `retry_after == ceil(retry_after_ms / 1000)`.
    static func tick(_ value: CountdownValue, remaining: Duration) -> [UInt8] {
        let seconds = value.totalSeconds
        let (whole, fraction) = remaining.components
        var milliseconds = whole * 1_000 + (fraction + 999_999_999_999_999) / 1_000_000_000_000_000
        milliseconds = min(max(milliseconds, (seconds - 1) * 1_000 + 1), seconds * 1_000)
        return Array("event: tick\ndata: {\"retry_after\": \(seconds), \"retry_after_ms\": \(milliseconds)}\n\n".utf8)
    }

    static let done = Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0}\n\n".utf8)
    /// `done` before the deadline, with why: one of ours (ASCII, no quotes), written as it is.
    static func done(reason: String) -> [UInt8] {
        Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0, \"reason\": \"\(reason)\"}\n\n".utf8)
    }
    static let heartbeat = Array(": heartbeat\n\n".utf8)
    /// The last frame of every stream when the server shuts down: reconnect after 1 s, to
    /// another gate. A contract (deploy/openapi.yaml): clients match it byte for byte.
    static let shutdown = Array("retry: 1000\nevent: shutdown\ndata: {}\n\n".utf8)
}
