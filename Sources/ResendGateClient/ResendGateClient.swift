import Countdown
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client for a resendgate server's HTTP API (or an app's own back end that forwards it),
/// on Foundation's `URLSession`.
///
/// Every call is `async throws(ResendGateError)`; a refused send is an answer
/// (``Decision/allowed`` false, with its ``Decision/reason``), not an error. Answers carry
/// a ``ServerReceipt`` timed on ``clock``, so countdowns follow the server's time, never
/// the device's wall clock.
public struct ResendGateClient: Sendable {
    /// The server's base URL, e.g. `https://api.example.com` (paths such as `/v1/sends` are added).
    public let baseURL: URL
    /// The API key sent as `Authorization: Bearer KEY`; nil for an app talking to its own
    /// back end (which holds the key), and never needed by the countdown routes.
    public let apiKey: String?
    /// Headers an app adds to every request (its user's `Authorization: Bearer <token>`, say),
    /// asked anew for each request, event-stream reconnects included, so that a token that
    /// rotates is picked up without rebuilding the client or the model. A plain closure
    /// (`{ ["Authorization": "Bearer \(store.token)"] }`) or an async one that refreshes
    /// the token; one that throws fails the call with ``ResendGateError/authentication``.
    public typealias HeaderProvider = @Sendable () async throws -> [String: String]
    /// The app's header provider; its headers win over ``apiKey``'s.
    public let headers: HeaderProvider?
    /// The session requests go through.
    public let session: URLSession
    /// Times answers: monotonic for countdowns, wall clock only for the offset to the server's.
    public let clock: any CountdownClock
    /// How long a plain request may take.
    public let timeout: TimeInterval
    /// The paths called under ``baseURL`` (the gate's own by default).
    public let routes: ClientRoutes
    /// Waits out the delay before an event stream reconnects (`Task.sleep`): a test puts
    /// its own here to see which delay the stream chose, whatever the machine's timing.
    package var sleepBeforeReconnect: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    /// The jitter of each reconnect delay, 0 up to 1 (random); a test fixes it.
    package var reconnectJitter: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// Makes a client for `baseURL`.
    public init(baseURL: URL, apiKey: String? = nil, headers: HeaderProvider? = nil, session: URLSession = .shared,
                clock: any CountdownClock = SystemCountdownClock(), timeout: TimeInterval = 10,
                routes: ClientRoutes = .gate) {
        self.routes = routes
        self.headers = headers
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.session = session
        self.clock = clock
        self.timeout = timeout
    }

    /// Asks to send a code to `phone` for `purpose` (`POST /v1/sends`). Allowed: the
    /// cooldown starts now. Refused: the reason and the time left. A retry with the same
    /// `idempotencyKey` within 24 h gets the first answer again and consumes nothing.
    /// A 429 whose body is not a decision (a back end's or gateway's own rate limit) throws
    /// ``ResendGateError/rateLimited`` with its `Retry-After`.
    public func send(phone: String, purpose: String = "default", idempotencyKey: String? = nil,
                     clientIP: String? = nil) async throws(ResendGateError) -> Decision {
        var body = ["phone": phone, "purpose": purpose]
        if let clientIP { body["client_ip"] = clientIP }
        var request = try await makeRequest("POST", path: routes.sends, json: body)
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        let (data, status, receipt) = try await perform(request, expecting: [200, 429]) { status, data in
            status == 200 || WireFormat.isDecision(data)
        }
        return try WireFormat.decision(data, status: status, receipt: receipt)
    }

    /// Checks the code the user typed (`POST /v1/checks` through the app's back end, scope
    /// `verify` there): a ``CodeCheckResult`` for the right code (valid once), else a
    /// ``ResendGateError`` whose code says why (``ResendGateError/wrongCode`` with
    /// ``ResendGateError/attemptsLeft``, ``ResendGateError/codeLocked``, ``ResendGateError/locked``,
    /// ``ResendGateError/codeExpired``, ``ResendGateError/codeUsed``, ``ResendGateError/codeVoided``,
    /// ``ResendGateError/codesNotIssued``) and ``ResendGateError/userMessage(_:)`` what to show.
    public func check(phone: String, purpose: String = "default", code: String)
        async throws(ResendGateError) -> CodeCheckResult
    {
        let body = ["phone": phone, "purpose": purpose, "code": code]
        let (data, status, _) = try await perform(try await makeRequest("POST", path: routes.checks, json: body))
        return try WireFormat.check(data, status: status)
    }

    /// Reads the cooldown of `phone` for `purpose` without consuming anything
    /// (`GET /v1/cooldowns/{phone}`).
    public func status(phone: String, purpose: String = "default") async throws(ResendGateError) -> CooldownStatus {
        let (data, status, receipt) = try await perform(try await makeRequest("GET", path: cooldownPath(phone, purpose)))
        return try WireFormat.cooldown(data, status: status, receipt: receipt)
    }

    /// Ends the cooldown of `phone` for `purpose` (the SMS provider failed): a send may go
    /// ahead at once (`DELETE /v1/cooldowns/{phone}`).
    public func release(phone: String, purpose: String = "default") async throws(ResendGateError) {
        _ = try await perform(try await makeRequest("DELETE", path: cooldownPath(phone, purpose)), expecting: [204])
    }

    /// Reads the countdown a send's `countdown_token` follows (`GET /v1/countdowns/{token}`),
    /// with no API key. Throws code ``ResendGateError/notFound`` once it ended or was released.
    public func countdown(token: String) async throws(ResendGateError) -> CountdownStatus {
        let request = try await makeRequest("GET", path: routes.countdown(Self.escape(token)))
        let (data, status, receipt) = try await perform(request)
        return try WireFormat.countdown(data, status: status, receipt: receipt)
    }

    /// Reports what the user's code turned out to be (`POST /v1/verifications`: the app's
    /// back end calls this, holding the API key with the `verify` scope, once it checked the
    /// code). `failed` counts against the last code sent (``VerificationReport/attemptsLeft``);
    /// it throws `no_code_sent` when none was, and `code_locked` (or `locked`) once the code
    /// may not be tried again: the back end then refuses the code.
    public func reportVerification(phone: String, purpose: String = "default", outcome: VerificationOutcome)
        async throws(ResendGateError) -> VerificationReport
    {
        let body = ["phone": phone, "purpose": purpose, "outcome": outcome.rawValue]
        let (data, status, _) = try await perform(try await makeRequest("POST", path: routes.verifications, json: body))
        return try WireFormat.verification(data, status: status)
    }

    // MARK: - Plumbing

    /// A request to `path` under ``baseURL``, with the API key and the provider's headers
    /// (asked now); `json` is sent as the body (its keys sorted).
    func makeRequest(_ method: String, path: String, json: [String: String]? = nil) async throws(ResendGateError) -> URLRequest {
        var url = baseURL.absoluteString
        while url.hasSuffix("/") { url.removeLast() }
        var request = URLRequest(url: URL(string: url + path)!, cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: timeout)
        request.httpMethod = method
        if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        if let headers {
            let fields: [String: String]
            do {
                fields = try await headers()
            } catch {
                if error is CancellationError { throw ResendGateError.transport(error) }
                throw ResendGateError(code: ResendGateError.authentication, message: "the header provider failed: \(error)")
            }
            for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        }
        return request
    }

    private func cooldownPath(_ phone: String, _ purpose: String) -> String {
        routes.cooldown(Self.escape(phone), Self.escape(purpose))
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters (`+` becomes `%2B`).
    static func escape(_ text: String) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Sends `request`; an answer whose status is not among `statuses`, or that `isAnswer`
    /// does not take, is thrown as its error (with its `Retry-After`).
    private func perform(_ request: URLRequest, expecting statuses: Set<Int> = [200],
                         isAnswer: (Int, Data) -> Bool = { _, _ in true }) async throws(ResendGateError)
        -> (Data, Int, ServerReceipt)
    {
        let sentAt = clock.now
        let data: Data, response: URLResponse
        do {
            (data, response) = try await Self.load(request, on: session)
        } catch {
            throw ResendGateError.transport(error)
        }
        let arrivedAt = clock.now
        guard let http = response as? HTTPURLResponse else {
            throw ResendGateError(code: ResendGateError.invalidResponse, message: "not an HTTP answer")
        }
        guard statuses.contains(http.statusCode), isAnswer(http.statusCode, data) else {
            throw WireFormat.error(data, status: http.statusCode, retryAfterHeader: http.value(forHTTPHeaderField: "Retry-After"))
        }
        let receipt = ServerReceipt(arrivedAt: arrivedAt, deviceTime: clock.wallNow,
                                    roundTrip: sentAt.duration(to: arrivedAt))
        return (data, http.statusCode, receipt)
    }

    /// `session`'s data task for `request`, cancelled with the calling task (corelibs'
    /// `data(for:)` does not follow task cancellation: a cancelled call would wait for its
    /// answer and then report it).
    private static func load(_ request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        let handle = CancellableTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error { return continuation.resume(throwing: error) }
                    guard let response else { return continuation.resume(throwing: URLError(.badServerResponse)) }
                    continuation.resume(returning: (data ?? Data(), response))
                }
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }
}

/// A data task that may be cancelled before it is started (it then starts cancelled).
private final class CancellableTask: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        let cancelled = lock.withLock { () -> Bool in
            self.task = task
            return self.cancelled
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock { () -> URLSessionDataTask? in
            cancelled = true
            return self.task
        }
        task?.cancel()
    }
}
