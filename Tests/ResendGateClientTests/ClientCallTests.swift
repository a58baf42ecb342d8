import Countdown
import Foundation
import ResendGateClient
import ResendGateTestSupport
import Testing

/// The client's calls against a real `resendgate serve` and a real Redis.
@Suite(.serialized) struct ClientCallTests {
    static let phone = "+8613800138000"

    @Test func sendIsAllowedThenRefusedWithItsReason() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let client = gate.client()
            let first = try await client.send(phone: "+86 138 0013 8000", purpose: "login")
            #expect(first.allowed && first.reason == nil)
            #expect(first.phone == Self.phone && first.purpose == "login")
            #expect(first.retryAfter == 60 && first.retryAfterMilliseconds == 60_000)
            #expect(abs(first.resendAt.timeIntervalSince(first.serverTime) - 60) < 0.01)
            #expect(first.sendsLeft == nil && first.nextRetryAfter == 60 && !first.testNumber)
            let token = try #require(first.countdownToken)
            #expect((44...128).contains(token.count))

            let second = try await client.send(phone: "13800138000", purpose: "login")
            #expect(!second.allowed && second.reason == .cooldown)
            // The same cooldown, however long the machine took between the two calls.
            #expect(abs(second.resendAt.timeIntervalSince(first.resendAt)) < 0.01)
            #expect(second.retryAfter == (second.retryAfterMilliseconds + 999) / 1000 && second.retryAfter <= 60)
            #expect(second.countdownToken == token)

            let status = try await client.status(phone: Self.phone, purpose: "login")
            #expect(status.active && status.resendAt.map { abs($0.timeIntervalSince(first.resendAt)) < 0.01 } == true)
            let countdown = try await client.countdown(token: token)
            #expect(countdown.active && abs(countdown.resendAt.timeIntervalSince(first.resendAt)) < 0.01)

            try await client.release(phone: Self.phone, purpose: "login")
            #expect(try await client.status(phone: Self.phone, purpose: "login").active == false)
            #expect(try await client.send(phone: Self.phone, purpose: "login").allowed)
        }
    }

    @Test func apiErrorsCarryTheirCodeAndStatus() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let client = gate.client()
            let invalid = await #expect(throws: ResendGateError.self) { try await client.send(phone: "+86 999") }
            #expect(invalid?.code == "invalid_phone" && invalid?.status == 400)
            let purpose = await #expect(throws: ResendGateError.self) { try await client.send(phone: Self.phone, purpose: "Bad Purpose!") }
            #expect(purpose?.code == "invalid_purpose" && purpose?.status == 400)
            let missing = await #expect(throws: ResendGateError.self) { try await client.countdown(token: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") }
            #expect(missing?.code == ResendGateError.notFound && missing?.status == 404)
            let reused = await #expect(throws: ResendGateError.self) {
                _ = try await client.send(phone: Self.phone, purpose: "login", idempotencyKey: "k-1")
                _ = try await client.send(phone: "+8613800138001", purpose: "login", idempotencyKey: "k-1")
            }
            #expect(reused?.code == "idempotency_key_reused" && reused?.status == 422)
            let unreachable = ResendGateClient(baseURL: URL(string: "http://127.0.0.1:1")!)
            let transport = await #expect(throws: ResendGateError.self) { try await unreachable.status(phone: Self.phone) }
            #expect(transport?.code == ResendGateError.transport && transport?.status == nil)
        }
    }

    /// A gate with API keys: no key or a wrong one is `unauthorized`; the countdown routes
    /// need none, so an app can follow a token its back end handed it.
    @Test func bearerKeyIsSentWhenGivenAndCountdownsNeedNone() async throws {
        let key = "client-test-key-0123456789"
        try await withLiveGate(cooldown: "60s", apiKey: key) { gate in
            let anonymous = ResendGateClient(baseURL: gate.baseURL)
            let wrong = ResendGateClient(baseURL: gate.baseURL, apiKey: "not-the-key-0123456789")
            let keyed = ResendGateClient(baseURL: gate.baseURL, apiKey: key)
            for client in [anonymous, wrong] {
                let refused = await #expect(throws: ResendGateError.self) { try await client.send(phone: Self.phone) }
                #expect(refused?.code == "unauthorized" && refused?.status == 401)
                let peek = await #expect(throws: ResendGateError.self) { try await client.status(phone: Self.phone) }
                #expect(peek?.code == "unauthorized")
            }
            let sent = ContinuousClock.now
            let decision = try await keyed.send(phone: Self.phone)
            let token = try #require(decision.countdownToken)
            #expect(try await anonymous.countdown(token: token).active)
            var first: CountdownUpdate?
            for try await update in anonymous.countdownEvents(token: token) {
                first = update
                break
            }
            // 60 s less the time since the send (more than a second on a loaded machine).
            let elapsed = (ContinuousClock.now - sent).components.seconds
            if case .tick(let tick) = first {
                #expect((59 - elapsed...60).contains(tick.retryAfter), "\(tick.retryAfter) s after \(elapsed) s")
            } else {
                Issue.record("no tick: \(String(describing: first))")
            }
        }
    }

    /// An idempotent retry gets the first answer and consumes nothing.
    @Test func idempotentRetryGetsTheFirstAnswer() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let client = gate.client()
            let first = try await client.send(phone: Self.phone, idempotencyKey: "same-key")
            let retry = try await client.send(phone: Self.phone, idempotencyKey: "same-key")
            #expect(first.allowed && retry.allowed)
            #expect(retry.countdownToken == first.countdownToken && retry.resendAt == first.resendAt)
        }
    }

    /// The answer's countdown is anchored to its arrival on the client's monotonic clock,
    /// less half the round trip, whatever the device's wall clock says.
    @Test func answerCountdownIsAnchoredToItsArrival() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let clock = SkewedClock(skew: 300)  // device clock 5 minutes fast
            let started = StallWatch.mark()
            let decision = try await gate.client(clock: clock).send(phone: Self.phone)
            let receipt = decision.receipt
            // The round trip is real time: a process frozen meanwhile makes it longer.
            let stalled = StallWatch.shared.stalled(from: started)
            #expect(receipt.roundTrip > .zero && receipt.roundTrip - stalled < .seconds(5), "\(receipt.roundTrip), \(stalled) stalled")
            let expected = receipt.arrivedAt.advanced(by: .milliseconds(60_000) - receipt.roundTrip / 2)
            #expect(decision.countdown.deadline == expected)
            // What is left now: 60 s less half the round trip and the time since it arrived.
            let remaining = decision.countdown.remaining(at: clock.now)
            let since = ContinuousClock.now - started
            #expect(remaining <= .seconds(60) && remaining >= .seconds(60) - since, "\(remaining) left \(since) after the send")
            // The device time recorded for server_time carries the 5 minutes.
            let offset = decision.countdown.deviceTimeAtServerTime.timeIntervalSince(decision.serverTime)
            #expect(abs(offset - 300) < 1)
        }
    }
}
