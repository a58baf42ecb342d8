import Countdown
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `tick` of a countdown's event stream, timed on the client's monotonic clock.
public struct CountdownTick: Hashable, Sendable {
    /// Whole seconds left, rounded up.
    public var retryAfter: Int64
    /// The same in milliseconds.
    public var retryAfterMilliseconds: Int64
    /// When the tick arrived, on the client's monotonic clock.
    public var receivedAt: CountdownInstant

    /// When the countdown ends on the client's monotonic clock, by this tick.
    public var deadline: CountdownInstant { receivedAt.advanced(by: .milliseconds(retryAfterMilliseconds)) }
}

/// What ``ResendGateClient/countdownEvents(token:)`` yields.
public enum CountdownUpdate: Hashable, Sendable {
    /// The time left, at once and each time the whole-second value changes.
    case tick(CountdownTick)
    /// The countdown is over: a send may go ahead. The last element. `reason` is the
    /// server's when it gave one (a release ending the cooldown early), or `not_found`
    /// when a reconnect found the countdown already gone.
    case done(reason: String?)
}

extension ResendGateClient {
    /// How long to wait before reconnecting when the server named no `retry:`.
    public static let defaultReconnectDelay: Duration = .seconds(1)
    /// The longest `retry:` honoured; a larger one is cut to this.
    public static let maximumReconnectDelay: Duration = .seconds(30)
    /// Connections in a row that may fail (no answer, a 5xx, or an answer that ends without
    /// an event) before the stream throws.
    public static let maximumFailedReconnects = 10

    /// The wait before the next connection: the server's `retry:` (or
    /// ``defaultReconnectDelay``), doubled for each failure in a row, at most
    /// ``maximumReconnectDelay``; `jitter` (0 up to 1) spreads it up to a quarter longer, or,
    /// at the ceiling, up to a fifth shorter, so that clients a restart dropped together do
    /// not all come back at once.
    public static func reconnectDelay(retry: Duration, failures: Int, jitter: Double) -> Duration {
        var delay = retry
        for _ in 0..<min(failures, 32) where delay < maximumReconnectDelay { delay *= 2 }
        let jitter = min(max(jitter, 0), 1)
        return min(delay * (1 + jitter / 4), maximumReconnectDelay * (0.8 + jitter / 5))
    }

    /// Follows a countdown live (`GET /v1/countdowns/{token}/events`, no API key): a
    /// ``CountdownUpdate/tick(_:)`` at once and at each whole-second change, then
    /// ``CountdownUpdate/done(reason:)`` and the end.
    ///
    /// A dropped connection, or a server's `shutdown` event (a gate restarting), is followed
    /// by a reconnect after ``reconnectDelay(retry:failures:jitter:)``: the last `retry:` the
    /// server sent, doubled for each failure in a row (no answer, a 5xx, or a connection
    /// that ended without an event: a proxy that answers 200 and closes does not make it
    /// spin), with jitter. It throws a ``ResendGateError`` when the server refuses the token
    /// (`not_found` for an unknown one) or after ``maximumFailedReconnects`` failures in a
    /// row, the first connection's included (`maximumFailures`: fewer for a caller that
    /// would rather give up soon, as `resendgate watch` does). Stop following by cancelling the task that
    /// iterates it. Only the newest update waits for a slow reader (the stream keeps one),
    /// and memory is bounded (``ServerSentEventParser``).
    public func countdownEvents(
        token: String, maximumFailures: Int = maximumFailedReconnects
    ) -> AsyncThrowingStream<CountdownUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream<CountdownUpdate, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task {
            do {
                try await followEvents(token: token, maximumFailures: maximumFailures, into: continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func followEvents(
        token: String, maximumFailures: Int, into continuation: AsyncThrowingStream<CountdownUpdate, any Error>.Continuation
    ) async throws(ResendGateError) {
        var retry = Self.defaultReconnectDelay
        var failures = 0
        var connected = false
        // One session for the stream's life: its reconnects reuse it (and its trust decisions).
        let streaming = StreamingSession(configuration: session.configuration, forwardingTo: session.delegate,
                                         delegateQueue: session.delegateQueue)
        defer { streaming.invalidate() }
        while !Task.isCancelled {
            var parser = ServerSentEventParser()
            var events = 0
            do throws(ResendGateError) {
                let done = try await readEvents(
                    token: token, on: streaming, parser: &parser, into: continuation, connected: &connected, events: &events)
                if done { return }
                // A connection that ended without an event is a failure like a refused one.
                failures = events > 0 ? 0 : failures + 1
                guard failures <= maximumFailures else {
                    throw ResendGateError(code: ResendGateError.transport,
                                          message: "the event stream ended \(failures) times in a row without an event")
                }
            } catch {
                if error.code == ResendGateError.cancelled { return }
                if error.code == ResendGateError.notFound && connected {
                    continuation.yield(.done(reason: ResendGateError.notFound.rawValue))
                    return
                }
                let retriable = error.code == ResendGateError.transport || (error.status ?? 0) >= 500
                guard retriable, failures < maximumFailures else { throw error }
                failures += 1
            }
            if let milliseconds = parser.retryMilliseconds { retry = min(.milliseconds(milliseconds), Self.maximumReconnectDelay) }
            do {
                try await sleepBeforeReconnect(Self.reconnectDelay(retry: retry, failures: failures, jitter: reconnectJitter()))
            } catch {
                return  // cancelled
            }
        }
    }

    /// One connection: yields its ticks; true after `event: done`, false when the
    /// connection ended without it (closed, or a `shutdown` event).
    private func readEvents(token: String, on streaming: StreamingSession, parser: inout ServerSentEventParser,
                            into continuation: AsyncThrowingStream<CountdownUpdate, any Error>.Continuation,
                            connected: inout Bool, events: inout Int) async throws(ResendGateError) -> Bool {
        // Asked on each connection: a reconnect carries the app's current token.
        var request = try await makeRequest("GET", path: routes.countdownEvents(Self.escape(token)))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.timeoutInterval = 45  // idle time: the server sends a heartbeat every 15 s
        guard let connection = streaming.connect(request) else { throw ResendGateError.transport(CancellationError()) }
        defer { connection.cancel() }
        var status = 0
        var retryAfter: String?
        var errorBody = Data()
        do {
            for try await chunk in connection.chunks {
                switch chunk {
                case .response(let code, let wait):
                    status = code
                    retryAfter = wait
                    if code == 200 { connected = true }
                case .data(let data):
                    defer { connection.consumed(data.count) }
                    guard status == 200 else {
                        if errorBody.count < 16_384 { errorBody.append(data) }
                        continue
                    }
                    for event in try parser.feed(data) {
                        events += 1
                        switch event.event {
                        case "tick":
                            let body = try WireFormat.decode(WireFormat.TickBody.self, Data(event.data.utf8), status: status)
                            continuation.yield(.tick(CountdownTick(
                                retryAfter: body.retry_after, retryAfterMilliseconds: body.retry_after_ms,
                                receivedAt: clock.now)))
                        case "done":
                            let body = try? JSONDecoder().decode(WireFormat.TickBody.self, from: Data(event.data.utf8))
                            continuation.yield(.done(reason: body?.reason))
                            return true
                        case "shutdown":
                            return false
                        default:
                            continue
                        }
                    }
                }
            }
        } catch let error as ResendGateError {
            throw error
        } catch {
            throw ResendGateError.transport(error)
        }
        if status != 200 {
            if status == 0 { throw ResendGateError(code: ResendGateError.transport, message: "no answer") }
            throw WireFormat.error(errorBody, status: status, retryAfterHeader: retryAfter)
        }
        return false
    }
}
