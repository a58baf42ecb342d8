import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ResendGateClient
import Testing

/// The stream's rules against scripted servers: a restart's `shutdown` with `retry:`, a
/// `done` that carries a reason, and a hostile server that never ends a line.
@Suite(.serialized) struct StreamProtocolTests {
    static let token = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

    static func tick(_ seconds: Int) -> [UInt8] {
        Array("event: tick\ndata: {\"retry_after\": \(seconds), \"retry_after_ms\": \(seconds * 1_000)}\n\n".utf8)
    }

    /// A gate shutting down sends `retry: 150`, `event: shutdown` and closes: the client
    /// reconnects after 150 ms (not its 1 s default), and a `done` with a reason ends the
    /// stream even though that connection stays open. The delay is the one the stream
    /// asked to sleep, so a machine that stalls while it sleeps cannot fail the test.
    @Test func shutdownReconnectsAfterRetryAndDoneWithReasonEnds() async throws {
        let server = try ScriptedEventServer([
            .init(chunks: [ScriptedEventServer.streamHeader, Self.tick(5),
                           Array("retry: 150\nevent: shutdown\ndata: {}\n\n".utf8)], close: true),
            .init(chunks: [ScriptedEventServer.streamHeader, Self.tick(4),
                           Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0, \"reason\": \"released\"}\n\n".utf8)],
                  close: false),
        ])
        defer { server.stop() }
        let pauses = ReconnectPauses(sleeping: true)
        var updates: [CountdownUpdate] = []
        for try await update in pauses.client(of: server).countdownEvents(token: Self.token) {
            updates.append(update)
        }
        let seconds = updates.compactMap { update -> Int64? in
            if case .tick(let tick) = update { return tick.retryAfter }
            return nil
        }
        #expect(seconds == [5, 4])
        #expect(updates.last == .done(reason: "released"))
        #expect(pauses.recorded == [.milliseconds(150)])
        // And it did sleep that long: a sleep never ends early, however slow the machine.
        let timeline = server.timeline
        #expect(timeline.arrivals.count == 2)
        if timeline.arrivals.count == 2, let closed = timeline.closes.first {
            let wait = closed.duration(to: timeline.arrivals[1])
            #expect(wait >= .milliseconds(150), "reconnected after \(wait)")
        }
    }

    /// Without a `retry:` the client waits its 1 s default; a `retry:` above the 30 s
    /// ceiling is cut to it (less the jitter's fifth, here none of it), and stays in force
    /// for later reconnects that name none. Each connection brought a tick: no failure, no
    /// doubling.
    @Test func reconnectDelayIsTheDefaultUntilARetryAndNeverAboveTheCeiling() async throws {
        let dropped = { (extra: String) in
            ScriptedEventServer.Reply(chunks: [ScriptedEventServer.streamHeader, Self.tick(9), Array(extra.utf8)], close: true)
        }
        let server = try ScriptedEventServer([
            dropped(""),
            dropped("retry: 600000\n\n"),
            dropped(""),
            .init(chunks: [ScriptedEventServer.streamHeader,
                           Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0}\n\n".utf8)], close: false),
        ])
        defer { server.stop() }
        let pauses = ReconnectPauses(sleeping: false)  // the delays are recorded, not waited out
        var updates: [CountdownUpdate] = []
        for try await update in pauses.client(of: server).countdownEvents(token: Self.token) {
            updates.append(update)
        }
        #expect(updates.count == 4 && updates.last == .done(reason: nil))
        #expect(pauses.recorded == [.seconds(1), .seconds(24), .seconds(24)], "\(pauses.recorded)")
        #expect(server.timeline.arrivals.count == 4)
    }

    /// A server that streams one endless line: the client gives up with `stream_too_large`
    /// once the line passes 64 KiB, having held no more than that.
    @Test func endlessLineIsRefusedAtTheBound() async throws {
        let flood = [UInt8](repeating: UInt8(ascii: "a"), count: 256 * 1_024)
        let server = try ScriptedEventServer([
            .init(chunks: [ScriptedEventServer.streamHeader, Self.tick(9), Array("data: ".utf8), flood], close: false),
        ])
        defer { server.stop() }
        var ticks = 0
        let error = await #expect(throws: ResendGateError.self) {
            for try await _ in ResendGateClient(baseURL: server.baseURL).countdownEvents(token: Self.token) { ticks += 1 }
        }
        #expect(error?.code == ResendGateError.streamTooLarge)
        #expect(ticks == 1)
        #expect(server.timeline.arrivals.count == 1)  // no reconnect after a protocol failure
    }

    /// A proxy that answers 200 and closes at once (no event) used to reset the failure
    /// count and loop every second forever: each such connection is a failure now, the wait
    /// doubles up to the ceiling, and after ``ResendGateClient/maximumFailedReconnects`` the
    /// stream throws.
    @Test func aConnectionThatEndsWithoutAnEventBacksOffAndGivesUp() async throws {
        let empty = ScriptedEventServer.Reply(chunks: [ScriptedEventServer.streamHeader], close: true)
        let server = try ScriptedEventServer(Array(repeating: empty, count: ResendGateClient.maximumFailedReconnects + 1))
        defer { server.stop() }
        let pauses = ReconnectPauses(sleeping: false)
        let error = await #expect(throws: ResendGateError.self) {
            for try await _ in pauses.client(of: server).countdownEvents(token: Self.token) {}
        }
        #expect(error?.code == ResendGateError.transport)
        #expect(pauses.recorded == [2, 4, 8, 16, 24, 24, 24, 24, 24, 24].map { Duration.seconds($0) }, "\(pauses.recorded)")
        #expect(server.timeline.arrivals.count == ResendGateClient.maximumFailedReconnects + 1)
    }

    /// A first connection that gets no answer is retried like a later one (it used to
    /// throw at once).
    @Test func aFirstConnectionWithNoAnswerIsRetried() async throws {
        let server = try ScriptedEventServer([
            .init(chunks: [], close: true),
            .init(chunks: [ScriptedEventServer.streamHeader, Self.tick(7),
                           Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0}\n\n".utf8)], close: false),
        ])
        defer { server.stop() }
        let pauses = ReconnectPauses(sleeping: false)
        var updates: [CountdownUpdate] = []
        for try await update in pauses.client(of: server).countdownEvents(token: Self.token) { updates.append(update) }
        #expect(updates.last == .done(reason: nil))
        #expect(pauses.recorded == [.seconds(2)])
    }

    @Test func delaysDoubleWithFailuresAndSpreadWithJitterUnderTheCeiling() {
        let delay = ResendGateClient.reconnectDelay
        #expect(delay(.seconds(1), 0, 0) == .seconds(1) && delay(.seconds(1), 0, 1) == .milliseconds(1_250))
        #expect(delay(.milliseconds(150), 0, 0.5) > .milliseconds(150))
        #expect(delay(.seconds(1), 3, 0) == .seconds(8))
        for jitter in stride(from: 0.0, through: 1.0, by: 0.1) {
            let capped = delay(.seconds(1), 40, jitter)
            #expect(capped >= .seconds(24) && capped <= ResendGateClient.maximumReconnectDelay, "\(capped)")
        }
    }

    /// A reconnect that finds the countdown gone (404) ends the stream with `done`.
    @Test func reconnectFindingTheCountdownGoneIsDone() async throws {
        let notFound = Array(("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 54\r\n\r\n"
            + #"{"error":{"code":"not_found","message":"no such one"}}"#).utf8)
        let server = try ScriptedEventServer([
            .init(chunks: [ScriptedEventServer.streamHeader, Self.tick(3), Array("retry: 10\n\n".utf8)], close: true),
            .init(chunks: [notFound], close: true),
        ])
        defer { server.stop() }
        var updates: [CountdownUpdate] = []
        for try await update in ResendGateClient(baseURL: server.baseURL).countdownEvents(token: Self.token) {
            updates.append(update)
        }
        #expect(updates.count == 2)
        #expect(updates.last == .done(reason: ResendGateError.notFound.rawValue))
    }
}

/// Records each delay a client's event stream sleeps before reconnecting; sleeps it
/// too when `sleeping`, else goes on at once.
private final class ReconnectPauses: @unchecked Sendable {
    // Guarded by `lock` (not Synchronization's Mutex: macOS 15, past the kit's platforms).
    private let lock = NSLock()
    private var delays: [Duration] = []
    private let sleeping: Bool

    init(sleeping: Bool) { self.sleeping = sleeping }

    var recorded: [Duration] { lock.withLock { delays } }

    /// A client of `server` whose reconnects go through this recorder.
    func client(of server: ScriptedEventServer) -> ResendGateClient {
        var client = ResendGateClient(baseURL: server.baseURL)
        client.reconnectJitter = { 0 }
        client.sleepBeforeReconnect = { [self] delay in
            lock.withLock { delays.append(delay) }
            if sleeping { try await Task.sleep(for: delay) }
        }
        return client
    }
}

/// Issue 25: the stream used to drop the caller's `URLSession` delegate, so a server's or a
/// proxy's login challenge (or certificate pinning) never reached the app.
@Suite struct StreamDelegateTests {
    final class LoginDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        // @unchecked: `challenges` is guarded by `lock`.
        private let lock = NSLock()
        private var seen: [String] = []
        private var sessions: [ObjectIdentifier] = []
        var challenges: [String] { lock.withLock { seen } }
        /// The session each challenge came through.
        var challengeSessions: [ObjectIdentifier] { lock.withLock { sessions } }

        func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
            lock.withLock {
                seen.append(challenge.protectionSpace.authenticationMethod)
                sessions.append(ObjectIdentifier(session))
            }
            completionHandler(.useCredential, URLCredential(user: "app", password: "secret", persistence: .forSession))
        }
    }

    @Test func aLoginChallengeReachesTheCallersDelegate() async throws {
        let challenge = Array(("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"events\"\r\n"
            + "Content-Length: 0\r\n\r\n").utf8)
        let server = try ScriptedEventServer([
            .init(chunks: [challenge], close: true),
            .init(chunks: [ScriptedEventServer.streamHeader,
                           Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0}\n\n".utf8)], close: false),
        ])
        defer { server.stop() }
        let delegate = LoginDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var updates: [CountdownUpdate] = []
        for try await update in ResendGateClient(baseURL: server.baseURL, session: session).countdownEvents(token: StreamProtocolTests.token) {
            updates.append(update)
        }
        #expect(delegate.challenges == [NSURLAuthenticationMethodHTTPBasic])
        #expect(updates == [.done(reason: nil)])
    }

    /// Issue 37: a stream's reconnects go through one `URLSession` (each used to make its
    /// own, so the app's delegate saw a new session, and a new TLS handshake, each time).
    @Test func reconnectsShareOneSession() async throws {
        let challenge = Array(("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"events\"\r\n"
            + "Content-Length: 0\r\n\r\n").utf8)
        let server = try ScriptedEventServer([
            .init(chunks: [challenge], close: true),
            .init(chunks: [ScriptedEventServer.streamHeader, Array("retry: 1\nevent: shutdown\ndata: {}\n\n".utf8)], close: true),
            .init(chunks: [challenge], close: true),
            .init(chunks: [ScriptedEventServer.streamHeader,
                           Array("event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0}\n\n".utf8)], close: false),
        ])
        defer { server.stop() }
        let delegate = LoginDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var client = ResendGateClient(baseURL: server.baseURL, session: session)
        client.sleepBeforeReconnect = { _ in }
        var updates: [CountdownUpdate] = []
        for try await update in client.countdownEvents(token: StreamProtocolTests.token) { updates.append(update) }
        #expect(updates == [.done(reason: nil)])
        let sessions = delegate.challengeSessions
        #expect(sessions.count == 2 && Set(sessions).count == 1, "\(sessions)")
    }
}
