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
            for index in 0..<calls {
                let before = try Self.redisTime(client)
                let decision = try await gate.reserve(
                    phone: String(format: "+86138%08d", index % 10), clientIP: "10.0.0.\(index % 3)",
                    idempotencyKey: index % 2 == 0 ? "key-\(index)" : nil)
                let after = try Self.redisTime(client)
                // The reckoning is half a round trip off at most, and Redis rounds to ms.
                #expect(decision.serverTimeMilliseconds >= before - 2 && decision.serverTimeMilliseconds <= after + 2,
                        "call \(index): server_time \(decision.serverTimeMilliseconds) outside Redis's \(before)...\(after)")
            }
            // A sent time in the window is the answer's server_time: Redis's clock too.
            let window = try #require(try client.command("GET", windowKey("+8613800000000")).string)
            let first = try #require(Int64(window.prefix(13)))
            #expect(abs(first - (try Self.redisTime(client))) < 60_000)
            // One TIME for the connection's reading (two if the first call came before it), not one per call.
            let stats = try #require(try client.command("INFO", "commandstats").string)
            let timeCalls = stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_time:") }
                .flatMap { $0.split(separator: "=").dropFirst().first?.split(separator: ",").first }.flatMap { Int($0) } ?? 0
            #expect(timeCalls <= 2, "TIME calls: \(timeCalls) for \(calls) decisions")
        }
    }

    /// Redis's clock in ms, without a `TIME` command (which the test counts): `INFO server`'s.
    static func redisTime(_ client: RedisTestClient) throws -> Int64 {
        let info = try #require(try client.command("INFO", "server").string)
        let line = try #require(info.split(separator: "\r\n").first { $0.hasPrefix("server_time_usec:") })
        return try #require(Int64(line.dropFirst("server_time_usec:".count))) / 1000
    }
}
