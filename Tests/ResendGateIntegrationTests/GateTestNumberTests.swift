import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 6: test numbers skip every limit and leave nothing in Redis.
@Suite("Gate: test numbers against a real Redis")
struct GateTestNumberTests {
    @Test func testNumbersAreAlwaysAllowedAndLeaveNoKey() async throws {
        let redis = try await startRedis()
        let strict = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 1, ipMaxSends: 1, ipWindow: .seconds(3600),
                            allowedRegions: ["CN"])
        let configuration = try GateConfiguration(
            redis: try RedisConfiguration.patient(redis.url), policies: PolicySet(fallback: strict, plainPurposes: TestPurposes.names),
            defaultRegion: "US", testNumbers: try TestNumbers(parsing: "+15005550006,+15005551000/2"))
        let gate = Gate(configuration: configuration)
        defer { Task { await offThePool { redis.stop() } } }
        for attempt in 0..<5 {
            // Every spelling, any IP, any configured purpose, idempotency keys: never a limit.
            for spelling in ["+1 500 555 0006", "(500) 555-0006", "+15005551042"] {
                let decision = try await gate.reserve(
                    phone: spelling, purpose: "login", clientIP: "203.0.113.7", idempotencyKey: "k\(attempt)")
                #expect(decision.allowed && decision.testNumber && decision.reason == nil, "\(spelling): \(decision)")
                #expect(decision.countdownToken == nil && decision.retryAfterMilliseconds == 60_000)
            }
        }
        // Wrong codes for a test number count nothing either (CI can type any code).
        for _ in 0..<10 { #expect(try await gate.verify(phone: "+15005550006", outcome: .failed).attemptsLeft == nil) }
        let client = try redis.client()
        #expect(try client.command("DBSIZE") == .integer(0), "nothing recorded, not even the token secret")
        #expect(try await gate.peek(phone: "+15005550006").active == false)
        // Outside the ranges the rules hold: a US number is not in --allow-regions CN.
        let outside = await gateError { () async throws(GateError) in try await gate.reserve(phone: "+15005550007") }
        #expect(outside?.code == "region_not_allowed")
        let longer = await gateError { () async throws(GateError) in try await gate.reserve(phone: "+1500555104") }
        #expect(longer?.code != nil, "not a test number: one digit short of the range's length")
        // The purpose must still be configured, and the text still a number.
        let purpose = await gateError { () async throws(GateError) in try await gate.reserve(phone: "+15005550006", purpose: "made-up") }
        #expect(purpose?.code == "invalid_purpose")
        let text = await gateError { () async throws(GateError) in try await gate.reserve(phone: "+15005550006 ext. 1") }
        #expect(text?.code == "invalid_phone")
        #expect(try client.command("DBSIZE") == .integer(0))
    }
}
