import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One streaming HTTP request: its answer's status and body chunks as they arrive, through a
/// `URLSessionDataDelegate` (swift-corelibs-foundation has no `URLSession.bytes(for:)`).
///
/// At most ``limit`` bytes may wait for the reader; past that the request is cancelled and
/// the stream fails, so a server that outruns its reader cannot grow memory without limit.
final class StreamingDataTask: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `waiting`, `announced` and `task` are guarded by `lock`.
    enum Chunk: Sendable {
        case response(status: Int)
        case data(Data)
    }

    let chunks: AsyncThrowingStream<Chunk, any Error>
    private let continuation: AsyncThrowingStream<Chunk, any Error>.Continuation
    private let limit: Int
    private let lock = NSLock()
    private var waiting = 0
    private var announced = false
    private var session: URLSession?
    /// The caller's session delegate: authentication challenges (a pinned certificate, a
    /// proxy's or a server's login) go to it, as they would on the caller's own session.
    private let forwarded: (any URLSessionDelegate)?

    init(request: URLRequest, configuration: URLSessionConfiguration, forwardingTo forwarded: (any URLSessionDelegate)? = nil,
         limit: Int = 1 << 20) {
        (chunks, continuation) = AsyncThrowingStream.makeStream()
        self.limit = limit
        self.forwarded = forwarded
        super.init()
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        lock.withLock { self.session = session }
        session.dataTask(with: request).resume()
    }

    /// The reader has handled `count` bytes of a chunk.
    func consumed(_ count: Int) {
        lock.withLock { waiting -= count }
    }

    /// Stops the request (the reader went away); the session lets go of this delegate.
    func cancel() {
        let session = lock.withLock { () -> URLSession? in
            defer { self.session = nil }
            return self.session
        }
        session?.invalidateAndCancel()
        continuation.finish()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (status, overLimit) = lock.withLock { () -> (Int?, Bool) in
            waiting += data.count
            defer { announced = true }
            return (announced ? nil : (dataTask.response as? HTTPURLResponse)?.statusCode, waiting > limit)
        }
        if let status { continuation.yield(.response(status: status)) }
        if overLimit {
            continuation.finish(throwing: ResendGateError(
                code: ResendGateError.streamTooLarge, message: "the event stream ran over \(limit) bytes ahead of its reader"))
            return cancel()
        }
        continuation.yield(.data(data))
    }

    func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let forwarded else { return completionHandler(.performDefaultHandling, nil) }
        #if canImport(FoundationNetworking)
        forwarded.urlSession(session, didReceive: challenge, completionHandler: completionHandler)
        #else
        guard let method = forwarded.urlSession(_:didReceive:completionHandler:) else {
            return completionHandler(.performDefaultHandling, nil)
        }
        method(session, challenge, completionHandler)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let forwarded = forwarded as? any URLSessionTaskDelegate else { return completionHandler(.performDefaultHandling, nil) }
        #if canImport(FoundationNetworking)
        forwarded.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
        #else
        guard let method = forwarded.urlSession(_:task:didReceive:completionHandler:) else {
            return completionHandler(.performDefaultHandling, nil)
        }
        method(session, task, challenge, completionHandler)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let status = lock.withLock { () -> Int? in
            defer { announced = true }
            return announced ? nil : (task.response as? HTTPURLResponse)?.statusCode
        }
        if let status { continuation.yield(.response(status: status)) }
        if let error {
            continuation.finish(throwing: ResendGateError(code: ResendGateError.transport, message: "\(error)"))
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
        lock.withLock { self.session = nil }
    }
}
