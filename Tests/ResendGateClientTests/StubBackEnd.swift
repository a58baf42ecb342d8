import Countdown
import Foundation
import ResendGateClient
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A back end in this process (a `URLProtocol`), for the model's races: each request is
/// recorded, and answered by `answer`, which may hold it until the test lets it go, so a
/// late answer arrives exactly when the test wants it.
final class StubBackEnd: URLProtocol {
    struct Recorded: Sendable {
        let method: String
        let path: String
        let idempotencyKey: String?
        var authorization: String? = nil
        /// The JSON body's string members.
        var body: [String: String] = [:]
    }

    enum Answer: Sendable {
        case json(status: Int, String)
        case dropped
        /// No answer, with this `URLError` (`.notConnectedToInternet`: offline).
        case failed(URLError.Code)
        /// Any answer: status, headers, body (a gateway's HTML 429, an event stream).
        case raw(status: Int, headers: [String: String], String)

        /// An event stream's whole body, then the end of the answer.
        static func events(_ text: String) -> Answer {
            .raw(status: 200, headers: ["Content-Type": "text/event-stream"], text)
        }
    }

    /// Paths of requests the client cancelled (their task went away).
    nonisolated(unsafe) private static var stoppedPaths: [String] = []
    static var stopped: [String] { lock.withLock { stoppedPaths } }

    /// One back end at a time (the suites using it are serialized).
    nonisolated(unsafe) static var answer: @Sendable (Recorded) -> Answer = { _ in .dropped }
    private static let lock = NSLock()
    nonisolated(unsafe) private static var recordedRequests: [Recorded] = []
    nonisolated(unsafe) private static var holds: [String: DispatchSemaphore] = [:]

    static var recorded: [Recorded] { lock.withLock { recordedRequests } }

    /// Requests whose path starts with `prefix` wait until `release(prefix)`.
    static func hold(_ prefix: String) { lock.withLock { holds[prefix] = DispatchSemaphore(value: 0) } }
    static func release(_ prefix: String) { lock.withLock { holds.removeValue(forKey: prefix) }?.signal() }

    static func reset() {
        lock.withLock {
            recordedRequests = []
            stoppedPaths = []
            holds = [:]
        }
        answer = { _ in .dropped }
    }

    /// Waits (at most 5 s) until `count` requests were recorded.
    static func waitForRequests(_ count: Int) async {
        let deadline = ContinuousClock.now + .seconds(5)
        while recorded.count < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// A client whose every request comes here.
    static func makeClient(clock: any CountdownClock, routes: ClientRoutes = .gate,
                           headers: ResendGateClient.HeaderProvider? = nil) -> ResendGateClient {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [StubBackEnd.self]
        return ResendGateClient(baseURL: URL(string: "http://stub.invalid")!, headers: headers,
                                session: URLSession(configuration: configuration), clock: clock, routes: routes)
    }

    /// The body of `request` (corelibs moves it to a stream for a protocol).
    private static func body(of request: URLRequest) -> [String: String] {
        var data = request.httpBody ?? Data()
        if data.isEmpty, let stream = request.httpBodyStream {
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while stream.hasBytesAvailable {
                let count = stream.read(&buffer, maxLength: buffer.count)
                if count <= 0 { break }
                data.append(buffer, count: count)
            }
            stream.close()
        }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: String] ?? [:]
    }

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let request = self.request
        let recorded = Recorded(
            method: request.httpMethod ?? "GET", path: request.url?.path ?? "",
            idempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key"),
            authorization: request.value(forHTTPHeaderField: "Authorization"), body: Self.body(of: request))
        let hold = Self.lock.withLock { () -> DispatchSemaphore? in
            Self.recordedRequests.append(recorded)
            return Self.holds.first { recorded.path.hasPrefix($0.key) }?.value
        }
        nonisolated(unsafe) let this = self
        let respond: @Sendable () -> Void = {
            let client = this.stateLock.withLock { this.stopped ? nil : this.client }
            guard client != nil else { return }
            switch StubBackEnd.answer(recorded) {
            case .dropped:
                client?.urlProtocol(this, didFailWithError: URLError(.networkConnectionLost))
            case .failed(let code):
                client?.urlProtocol(this, didFailWithError: URLError(code))
            case .raw(let status, let headers, let body):
                let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
                client?.urlProtocol(this, didReceive: response, cacheStoragePolicy: .notAllowed)
                client?.urlProtocol(this, didLoad: Data(body.utf8))
                client?.urlProtocolDidFinishLoading(this)
            case .json(let status, let body):
                let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1",
                                               headerFields: ["Content-Type": "application/json"])!
                client?.urlProtocol(this, didReceive: response, cacheStoragePolicy: .notAllowed)
                client?.urlProtocol(this, didLoad: Data(body.utf8))
                client?.urlProtocolDidFinishLoading(this)
            }
        }
        guard let hold else { return respond() }
        DispatchQueue.global().async {
            hold.wait()
            hold.signal()
            respond()
        }
    }

    /// Set when the task is cancelled: a held answer then goes nowhere (corelibs traps on a
    /// protocol that answers for a task it forgot).
    private let stateLock = NSLock()
    nonisolated(unsafe) private var stopped = false

    override func stopLoading() {
        stateLock.withLock { stopped = true }
        let path = request.url?.path ?? ""
        Self.lock.withLock { Self.stoppedPaths.append(path) }
    }

    /// An allowed send's answer with `seconds` of cooldown and `token`.
    static func allowed(seconds: Int, token: String) -> Answer {
        .json(status: 200, """
            {"allowed":true,"phone":"+8613800138000","purpose":"login","retry_after":\(seconds),"retry_after_ms":\(seconds * 1000),\
            "resend_at":"\(stamp(after: seconds))","server_time":"\(stamp(after: 0))","next_retry_after":60,"sends_left":null,\
            "countdown_token":"\(token)"}
            """)
    }

    /// A countdown lookup's answer with `seconds` left.
    static func countdown(seconds: Int) -> Answer {
        .json(status: 200, """
            {"active":true,"retry_after":\(seconds),"retry_after_ms":\(seconds * 1000),"resend_at":"\(stamp(after: seconds))",\
            "server_time":"\(stamp(after: 0))"}
            """)
    }

    /// A countdown's event stream that ends at once: the back end released it.
    static let released = Answer.events("event: done\ndata: {\"retry_after\":0,\"retry_after_ms\":0,\"reason\":\"released\"}\n\n")

    /// An error answer in the API's words.
    static func error(_ status: Int, _ code: String, extra: String = "") -> Answer {
        .json(status: status, #"{"error":{"code":"\#(code)","message":"stub"\#(extra)}}"#)
    }

    static let notFound = Answer.json(status: 404, #"{"error":{"code":"not_found","message":"no running countdown"}}"#)

    private static func stamp(after seconds: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
    }
}

#if !canImport(FoundationNetworking)
// As before on Apple's Foundation. swift-corelibs-foundation marks URLProtocol's Sendable
// unavailable, so there the conformance was ignored with a warning (`startLoading` hands
// itself to its closure as `nonisolated(unsafe) let this`, which needs none).
extension StubBackEnd: @unchecked Sendable {}
#endif

/// Every suite that answers through `StubBackEnd` (one back end, global): nested here, they
/// run one at a time, never beside one another.
@Suite(.serialized) enum StubBackEndSuites {}
