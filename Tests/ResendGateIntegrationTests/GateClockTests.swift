import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// The reserve script takes Redis's clock as the gate's connection reckons it (a `TIME`
/// reading carried forward by the monotonic clock) instead of calling `TIME` itself: every
/// time it writes and compares must still be Redis's, and the reading must not cost a
/// command per decision.
@Suite("Gate: Redis's clock, reckoned by the connection", .ownThread)
struct GateClockTests {
    @Test func everyRuleAnswersStandOnRedisClockWithoutATimeCallEach() async throws {
        let policy = Policy(ladder: [.seconds(60), .seconds(120)], window: .seconds(3600), maxSends: 3, ipMaxSends: 50)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            let calls = 40
            let start = ContinuousClock.now
            for index in 0..<calls {
                let before = try Self.redisTime(client)
                let decision = try await gate.reserve(
                    phone: String(format: "+86138%08d", index % 10), clientIP: "10.0.0.\(index % 3)",
                    idempotencyKey: index % 2 == 0 ? "key-\(index)" : nil)
                let after = try Self.redisTime(client)
                // The reckoning is off by half a round trip at most: under a loaded machine's
                // stalls, tens of ms (this machine's clock is no better: it is Redis's too).
                #expect(decision.serverTimeMilliseconds >= before - 1000 && decision.serverTimeMilliseconds <= after + 1000,
                        "call \(index): server_time \(decision.serverTimeMilliseconds) outside Redis's \(before)...\(after)")
            }
            // A sent time in the window is the answer's server_time: Redis's clock too.
            let window = try #require(try client.command("GET", windowKey("+8613800000000")).string)
            let first = try #require(Int64(window.prefix(13)))
            #expect(abs(first - (try Self.redisTime(client))) < 60_000)
            // One TIME for the connection's reading, a few calls' own before it came, and at
            // most one reading again a second: not one per call.
            let seconds = Int((ContinuousClock.now - start).components.seconds)
            let stats = try #require(try client.command("INFO", "commandstats").string)
            let timeCalls = stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_time:") }
                .flatMap { $0.split(separator: "=").dropFirst().first?.split(separator: ",").first }.flatMap { Int($0) } ?? 0
            #expect(timeCalls <= 4 + seconds, "TIME calls: \(timeCalls) for \(calls) decisions in \(seconds) s")
        }
    }

    /// A status, a countdown lookup, a refund and a verification take the same reckoning:
    /// a `TIME` each would cost Redis about as much as the rest of such a call.
    @Test func statusCountdownRefundAndVerifyStandOnTheReckoningToo() async throws {
        let policy = Policy(ladder: [.seconds(60), .seconds(120)], window: .seconds(3600), maxSends: 5, maxRefunds: 100)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            _ = try await gate.reserve(phone: "+8613900000000")
            _ = try client.command("CONFIG", "RESETSTAT")
            let start = ContinuousClock.now
            for index in 0..<10 {
                let phone = String(format: "+86138%08d", index)
                let before = try Self.redisTime(client)
                let decision = try await gate.reserve(phone: phone)
                let status = try await gate.peek(phone: phone)
                let token = try #require(decision.countdownToken)
                let reading = try #require(try await gate.countdown(token))
                let after = try Self.redisTime(client)
                #expect(status.active && status.retryAfterMilliseconds <= 60_000)
                #expect(reading.retryAfterMilliseconds > 0 && reading.retryAfterMilliseconds <= 60_000)
                for time in [status.serverTimeMilliseconds, reading.serverTimeMilliseconds] {
                    #expect(time >= before - 1000 && time <= after + 1000, "server_time \(time) outside Redis's \(before)...\(after)")
                }
                #expect(try await gate.verify(phone: phone, outcome: .failed).attemptsLeft == 4)
                #expect(try await gate.release(phone: phone))
                #expect(!(try await gate.peek(phone: phone).active))
            }
            // 40 script calls; at most the connection's reading again once a second, not
            // one TIME for each.
            let seconds = Int((ContinuousClock.now - start).components.seconds)
            let stats = try #require(try client.command("INFO", "commandstats").string)
            #expect(commandCalls("time", in: stats) <= 3 + seconds, "TIME calls in \(seconds) s: \(stats)")
        }
    }

    /// Redis's clock in ms, without a `TIME` command (which the test counts): `INFO server`'s.
    static func redisTime(_ client: RedisTestClient) throws -> Int64 {
        let info = try #require(try client.command("INFO", "server").string)
        let line = try #require(info.split(separator: "\r\n").first { $0.hasPrefix("server_time_usec:") })
        return try #require(Int64(line.dropFirst("server_time_usec:".count))) / 1000
    }
}
