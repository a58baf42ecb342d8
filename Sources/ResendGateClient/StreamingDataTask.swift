import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLSession` of one event stream, for its whole life (every reconnect goes through
/// it, so a TLS session and a pinned server's trust decision are reused, and the app's
/// delegate sees one session): each ``connect(_:)`` is one streaming request.
///
/// Authentication challenges go to the caller's session delegate as Apple's `URLSession`
/// would route them on the caller's own session: a task-level challenge to
/// `urlSession(_:task:didReceive:completionHandler:)`, or, when the delegate implements only
/// the session-level method, a session-wide one (server trust, a client certificate) there;
/// a session-level challenge to the session-level method, or else to the task-level one
/// with the connection's task, so certificate pinning written in either is never skipped.
/// The delegate is called on the caller's session's `delegateQueue`.
final class StreamingSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `session` and `connections` are guarded by `lock`.
    private let lock = NSLock()
    private var session: URLSession?
    private var connections: [Int: StreamingDataTask] = [:]
    /// The caller's session delegate.
    private let forwarded: (any URLSessionDelegate)?

    init(configuration: URLSessionConfiguration, forwardingTo forwarded: (any URLSessionDelegate)?,
         delegateQueue: OperationQueue?) {
        self.forwarded = forwarded
        super.init()
        let session = URLSession(configuration: configuration, delegate: self,
                                 delegateQueue: forwarded == nil ? nil : delegateQueue)
        lock.withLock { self.session = session }
    }

    /// Starts one streaming request; nil once the session was invalidated.
    func connect(_ request: URLRequest, limit: Int = 1 << 20) -> StreamingDataTask? {
        lock.withLock { () -> StreamingDataTask? in
            guard let session else { return nil }
            let task = session.dataTask(with: request)
            let connection = StreamingDataTask(task: task, limit: limit)
            connections[task.taskIdentifier] = connection
            return connection
        }.map { connection in
            connection.task.resume()
            return connection
        }
    }

    /// Ends the stream's session: its tasks are cancelled and it lets go of this delegate.
    func invalidate() {
        let session = lock.withLock { () -> URLSession? in
            defer { self.session = nil }
            return self.session
        }
        session?.invalidateAndCancel()
    }

    private func connection(_ task: URLSessionTask) -> StreamingDataTask? {
        lock.withLock { connections[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        connection(dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let connection = lock.withLock { connections.removeValue(forKey: task.taskIdentifier) }
        connection?.completed(error)
    }

    // MARK: - Challenges

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        if let method = ChallengeForwarding.sessionMethod(of: forwarded) {
            return method(session, challenge, completionHandler)
        }
        let task = lock.withLock { connections.values.first?.task }
        if let task, let method = ChallengeForwarding.taskMethod(of: forwarded) {
            return method(session, task, challenge, completionHandler)
        }
        completionHandler(.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        if let method = ChallengeForwarding.taskMethod(of: forwarded) {
            return method(session, task, challenge, completionHandler)
        }
        if ChallengeForwarding.isSessionWide(challenge), let method = ChallengeForwarding.sessionMethod(of: forwarded) {
            return method(session, challenge, completionHandler)
        }
        completionHandler(.performDefaultHandling, nil)
    }
}

/// One streaming HTTP request of a ``StreamingSession``: its answer's status and body chunks
/// as they arrive (swift-corelibs-foundation has no `URLSession.bytes(for:)`).
///
/// At most `limit` bytes may wait for the reader; past that the request is cancelled and
/// the stream fails, so a server that outruns its reader cannot grow memory without limit.
final class StreamingDataTask: @unchecked Sendable {
    // @unchecked: `waiting` and `announced` are guarded by `lock`; the rest is immutable.
    enum Chunk: Sendable {
        case response(status: Int, retryAfter: String?)
        case data(Data)
    }

    let chunks: AsyncThrowingStream<Chunk, any Error>
    let task: URLSessionDataTask
    private let continuation: AsyncThrowingStream<Chunk, any Error>.Continuation
    private let limit: Int
    private let lock = NSLock()
    private var waiting = 0
    private var announced = false

    init(task: URLSessionDataTask, limit: Int) {
        (chunks, continuation) = AsyncThrowingStream.makeStream()
        self.task = task
        self.limit = limit
    }

    /// The reader has handled `count` bytes of a chunk.
    func consumed(_ count: Int) {
        lock.withLock { waiting -= count }
    }

    /// Stops the request (the reader went away).
    func cancel() {
        task.cancel()
        continuation.finish()
    }

    fileprivate func received(_ data: Data) {
        let (response, overLimit) = lock.withLock { () -> (Chunk?, Bool) in
            waiting += data.count
            return (announce(), waiting > limit)
        }
        if let response { continuation.yield(response) }
        if overLimit {
            continuation.finish(throwing: ResendGateError(
                code: ResendGateError.streamTooLarge, message: "the event stream ran over \(limit) bytes ahead of its reader"))
            return cancel()
        }
        continuation.yield(.data(data))
    }

    fileprivate func completed(_ error: (any Error)?) {
        if let response = lock.withLock({ announce() }) { continuation.yield(response) }
        if let error {
            continuation.finish(throwing: ResendGateError(
                code: ResendGateError.transport, message: "\(error)", isOffline: ResendGateError.isOffline(error)))
        } else {
            continuation.finish()
        }
    }

    /// The answer's status, the first time only (call with `lock` held).
    private func announce() -> Chunk? {
        guard !announced, let response = task.response as? HTTPURLResponse else { return nil }
        announced = true
        return .response(status: response.statusCode, retryAfter: response.value(forHTTPHeaderField: "Retry-After"))
    }
}
