import Countdown
import Foundation
import ResendGateClient
import ResendGateTestSupport
import Testing

extension StubBackEndSuites {
    /// Issue 37's three confirmed defects, each against `StubBackEnd`.
    @MainActor @Suite(.serialized) struct KitDefectTests {
        static let phone = "+8613800138000"

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        func makeButton(clock: VirtualClock = VirtualClock()) -> ResendButtonModel {
            let center = CountdownCenter(clock: clock, scheduler: clock, tolerance: .zero)
            return ResendButtonModel(client: StubBackEnd.makeClient(clock: clock), phone: Self.phone, purpose: "login",
                                     store: MemoryStore(), center: center)
        }

        /// 1: a refresh that failed (back in the foreground on a flaky network) bumped the
        /// generation and the live stream quietly stopped at its next event: a release
        /// afterwards left the button counting.
        @Test func aFailedRefreshKeepsFollowingTheStream() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { request in
                if request.path == "/v1/sends" { return StubBackEnd.allowed(seconds: 60, token: "T1") }
                if request.path.hasSuffix("/events") { return StubBackEnd.released }
                return .dropped  // the refresh's lookup
            }
            let button = makeButton()
            await button.send()
            StubBackEnd.hold("/v1/countdowns/T1/events")
            button.startLiveUpdates()
            defer { button.stopLiveUpdates() }
            await StubBackEnd.waitForRequests(2)
            await button.refresh()
            #expect(button.lastError?.code == ResendGateError.transport && button.state == .counting(seconds: 60))
            StubBackEnd.release("/v1/countdowns/T1/events")  // the back end released the cooldown
            let deadline = PatientDeadline(.seconds(5))
            while button.state != .ready && deadline.hasTimeLeft { try await Task.sleep(for: .milliseconds(10)) }
            #expect(button.state == .ready, "still \(button.state) after the release")
        }

        /// 2: `--on-store-failure open` answers 200 allowed without `next_retry_after` or a
        /// token (SendsRoute.allowUnrecorded, byte for byte); the kit threw `invalid_response`,
        /// the button went back to idle after an SMS went out, and the next tap sent another.
        @Test func theFailOpenAnswerIsAllowedAndSaysNotRecorded() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            let now = ISO8601DateFormatter.withMilliseconds.string(from: Date())
            let later = ISO8601DateFormatter.withMilliseconds.string(from: Date().addingTimeInterval(60))
            StubBackEnd.answer = { _ in
                .raw(status: 200, headers: ["Content-Type": "application/json", "X-Resendgate-Store": "unavailable"], """
                    {"allowed":true,"phone":"+8613800138000","purpose":"login","retry_after":60,"retry_after_ms":60000,\
                    "resend_at":"\(later)","server_time":"\(now)","store":"unavailable"}
                    """)
            }
            let decision = try await StubBackEnd.makeClient(clock: VirtualClock()).send(phone: Self.phone, purpose: "login")
            #expect(decision.allowed && !decision.recorded && decision.nextRetryAfter == nil && decision.countdownToken == nil)
            let button = makeButton()
            await button.send()
            #expect(button.state == .counting(seconds: 60) && button.lastError == nil && !button.isEnabled)
            #expect(button.lastDecision?.recorded == false)
        }

        /// 3: every 429 was read as a send decision, so a back end's or gateway's own 429 with
        /// `Retry-After` became `invalid_response` and lost its wait; any answer that is not the
        /// API's is now a typed error with its status and wait.
        @Test func answersThatAreNotDecisionsAreTypedErrorsWithTheirWait() async throws {
            StubBackEnd.reset()
            let client = StubBackEnd.makeClient(clock: VirtualClock())
            let cases: [(StubBackEnd.Answer, ResendGateError.Code, Int, Duration?)] = [
                (.raw(status: 429, headers: ["Retry-After": "30", "Content-Type": "text/html"], "<h1>Too many</h1>"),
                 ResendGateError.rateLimited, 429, .seconds(30)),
                (.raw(status: 429, headers: ["Retry-After": "12"], #"{"message":"slow down"}"#), ResendGateError.rateLimited, 429, .seconds(12)),
                (.raw(status: 502, headers: [:], "Bad Gateway"), ResendGateError.httpError, 502, nil),
                (.raw(status: 503, headers: ["Retry-After": "5"], ""), ResendGateError.httpError, 503, .seconds(5)),
                (StubBackEnd.error(503, "store_unavailable"), ResendGateError.storeUnavailable, 503, nil),
                (StubBackEnd.error(429, "locked", extra: #","retry_after":900,"retry_after_ms":899500"#),
                 ResendGateError.locked, 429, .milliseconds(899_500)),
                (StubBackEnd.error(401, "unauthorized"), ResendGateError.unauthorized, 401, nil),
            ]
            for (answer, code, status, wait) in cases {
                StubBackEnd.answer = { _ in answer }
                do {
                    let decision = try await client.send(phone: Self.phone, purpose: "login")
                    Issue.record("\(answer) read as a decision: \(decision)")
                } catch {
                    #expect(error.code == code && error.status == status && error.retryAfter == wait, "\(answer): \(error)")
                    #expect(!(error.errorDescription ?? "").contains("HTTP"), "a user message, not debug text: \(error.errorDescription ?? "")")
                }
            }
            // A refusal is still a decision, not an error.
            StubBackEnd.answer = { _ in
                .json(status: 429, """
                    {"allowed":false,"reason":"cooldown","phone":"+8613800138000","purpose":"login","retry_after":42,\
                    "retry_after_ms":41500,"resend_at":"2026-12-01T14:39:25.594Z","server_time":"2026-12-01T14:38:44.094Z",\
                    "next_retry_after":60,"sends_left":null,"countdown_token":"T1"}
                    """)
            }
            let refused = try await client.send(phone: Self.phone, purpose: "login")
            #expect(!refused.allowed && refused.reason == .cooldown && refused.retryAfter == 42)
        }
    }
}

extension ISO8601DateFormatter {
    /// RFC 3339 with milliseconds, as the API writes times.
    static var withMilliseconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
