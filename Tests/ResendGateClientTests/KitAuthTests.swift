import Countdown
import Foundation
@testable import ResendGateClient
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StubBackEndSuites {
    /// Issue 37: the app's headers on every request, stream reconnects included, and the
    /// stream's challenges routed to the app's delegate as its own session would.
    @Suite(.serialized) struct KitAuthTests {
        /// A token that rotates on each ask, as an app's JWT refresher might.
        final class RotatingToken: @unchecked Sendable {
            private let lock = NSLock()
            private var count = 0
            func next() -> String { lock.withLock { count += 1; return "token-\(count)" } }
        }

        @Test func theHeaderProviderIsAskedForEveryRequestAndReconnect() async throws {
            StubBackEnd.reset()
            let tokens = RotatingToken()
            let connections = AttemptCounter()
            StubBackEnd.answer = { request in
                if request.path.hasSuffix("/events") {
                    // The first connection ends with the gate's shutdown: the kit reconnects.
                    return connections.next() == 0 ? .events("retry: 1\nevent: shutdown\ndata: {}\n\n") : StubBackEnd.released
                }
                return StubBackEnd.countdown(seconds: 30)
            }
            var client = StubBackEnd.makeClient(clock: VirtualClock(), headers: {
                try await Task.sleep(for: .milliseconds(1))  // an async provider (a token refresh)
                return ["Authorization": "Bearer \(tokens.next())"]
            })
            client.sleepBeforeReconnect = { _ in }
            _ = try await client.countdown(token: "T1")
            var updates: [CountdownUpdate] = []
            for try await update in client.countdownEvents(token: "T1") { updates.append(update) }
            #expect(updates == [.done(reason: "released")])
            #expect(StubBackEnd.recorded.map(\.authorization) == ["Bearer token-1", "Bearer token-2", "Bearer token-3"])
        }

        @Test func aFailingHeaderProviderSendsNothing() async {
            StubBackEnd.reset()
            struct Expired: Error {}
            let client = StubBackEnd.makeClient(clock: VirtualClock(), headers: { throw Expired() })
            do {
                _ = try await client.send(phone: "+8613800138000")
                Issue.record("sent without headers")
            } catch {
                #expect(error.code == ResendGateError.authentication && error.errorDescription == "Your session has expired. Sign in again.")
            }
            #expect(StubBackEnd.recorded.isEmpty)
        }

        /// Pinning written in either challenge method is reached: a session-wide challenge
        /// (server trust) that comes to the task-level method goes to a delegate that has only
        /// the session-level one; a Basic login does not (Apple's rule).
        @Test func aSessionWideChallengeReachesASessionLevelDelegate() throws {
            final class Pinning: NSObject, URLSessionDelegate, @unchecked Sendable {
                // @unchecked: `seen` is written by the call the test makes, read after it.
                var seen: [String] = []
                func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                                completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
                    seen.append(challenge.protectionSpace.authenticationMethod)
                    completionHandler(.cancelAuthenticationChallenge, nil)
                }
            }
            final class Sender: NSObject, URLAuthenticationChallengeSender {
                func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
                func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
                func cancel(_ challenge: URLAuthenticationChallenge) {}
                func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
                func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
            }
            func challenge(_ method: String) -> URLAuthenticationChallenge {
                URLAuthenticationChallenge(
                    protectionSpace: URLProtectionSpace(host: "api.example.com", port: 443, protocol: "https", realm: nil,
                                                        authenticationMethod: method),
                    proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil, sender: Sender())
            }
            let pinning = Pinning()
            let streaming = StreamingSession(configuration: .ephemeral, forwardingTo: pinning, delegateQueue: nil)
            defer { streaming.invalidate() }
            let session = URLSession(configuration: .ephemeral)
            let task = session.dataTask(with: URL(string: "https://api.example.com/")!)
            let dispositions = AttemptCounter()
            streaming.urlSession(session, task: task, didReceive: challenge(ChallengeForwarding.serverTrust)) { disposition, _ in
                if disposition == .cancelAuthenticationChallenge { _ = dispositions.next() }
            }
            streaming.urlSession(session, task: task, didReceive: challenge(NSURLAuthenticationMethodHTTPBasic)) { disposition, _ in
                if disposition == .performDefaultHandling { _ = dispositions.next() }
            }
            #expect(pinning.seen == [ChallengeForwarding.serverTrust])
            #expect(dispositions.next() == 2)
        }
    }
}

extension StubBackEndSuites {
    /// Issue 37: the event stream keeps only the newest update for a slow reader
    /// (`bufferingNewest(1)`): a reader that comes late never walks through stale ticks.
    @Suite struct StreamBufferingTests {
        /// A system clock that counts how often its monotonic time was read (once a tick).
        final class CountingClock: CountdownClock, @unchecked Sendable {
            // @unchecked: `count` is guarded by `lock`.
            private let lock = NSLock()
            private var count = 0
            private let system = SystemCountdownClock()
            var reads: Int { lock.withLock { count } }
            var now: CountdownInstant {
                lock.withLock { count += 1 }
                return system.now
            }
            var wallNow: Date { system.wallNow }
        }

        @Test func aLateReaderGetsOnlyTheNewestUpdate() async throws {
            StubBackEnd.reset()
            let ticks = (1...3).reversed().map { "event: tick\ndata: {\"retry_after\":\($0),\"retry_after_ms\":\($0 * 1000)}\n\n" }
            StubBackEnd.answer = { _ in .events(ticks.joined() + "event: done\ndata: {\"retry_after\":0,\"retry_after_ms\":0}\n\n") }
            let clock = CountingClock()
            let events = StubBackEnd.makeClient(clock: clock).countdownEvents(token: "T1")
            // The reader waits until the stream has read all three ticks (it reads the clock
            // once for each), then starts.
            let deadline = ContinuousClock.now + .seconds(10)
            while clock.reads < 3 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(clock.reads >= 3)
            var seconds: [Int64] = []
            for try await update in events {
                if case .tick(let tick) = update { seconds.append(tick.retryAfter) }
            }
            #expect(seconds.allSatisfy { $0 == 1 }, "stale ticks kept for a late reader: \(seconds)")
        }
    }
}
