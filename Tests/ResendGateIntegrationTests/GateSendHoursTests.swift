import Foundation
import RedisClient
import Synchronization
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 36: a rule that is not a counter (`--send-hours`) on a real gate and Redis, time
/// moved on the gate's injectable wall clock, never by sleeping.
@Suite("Gate: send hours")
struct GateSendHoursTests {
    @Test func outsideItsHoursAPurposeIsRefusedUntilTheyBeginAndNothingIsStored() async throws {
        try await withRedis { redis in
            let midnight: Int64 = 20_000 * 86_400_000
            let now = Atomic<Int64>(midnight + 7 * 3_600_000 + 59 * 60_000 + 30_000)  // 07:59:30 UTC
            var marketing = Policy(ladder: [.seconds(60)])
            marketing.ruleTexts["send-hours"] = "08:00-21:00"
            var configuration = try GateConfiguration(
                redis: RedisConfiguration(url: redis.url), policies: PolicySet(fallback: .default, purposes: ["marketing": marketing]),
                defaultRegion: "CN")
            configuration.wallClock = { now.load(ordering: .relaxed) }
            let gate = Gate(configuration: configuration)
            // Retries at once, with or without an Idempotency-Key, are all refused.
            for key in [nil, "k1", "k1", nil] {
                let refused = try await gate.reserve(phone: "+8613800138000", purpose: "marketing", idempotencyKey: key)
                #expect(!refused.allowed && refused.reason == .outsideSendHours && refused.retryAfterMilliseconds == 30_000)
                #expect(refused.serverTimeMilliseconds == now.load(ordering: .relaxed) && refused.countdownToken == nil)
            }
            #expect(try redis.client().keys().isEmpty)
            // Another purpose has no such hours.
            #expect(try await gate.reserve(phone: "+8613800138001").allowed)
            // At 08:00 the window opens; at 21:00 it closes until 08:00 the next day.
            now.store(midnight + 8 * 3_600_000, ordering: .relaxed)
            #expect(try await gate.reserve(phone: "+8613800138000", purpose: "marketing").allowed)
            now.store(midnight + 21 * 3_600_000, ordering: .relaxed)
            let closed = try await gate.reserve(phone: "+8613800138002", purpose: "marketing")
            #expect(closed.reason == .outsideSendHours && closed.retryAfterMilliseconds == 11 * 3_600_000)
        }
    }
}
