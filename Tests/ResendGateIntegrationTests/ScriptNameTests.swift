@testable import ResendGate
import ResendGateTestSupport
import Testing

/// The gate calls its scripts by `EVALSHA` with the name `SHA1` gives them: a real
/// Redis must give every script the same name when it loads it.
@Suite("Script names agree with Redis", .ownThread)
struct ScriptNameTests {
    @Test func redisNamesEveryGateScriptAsTheGateDoes() async throws {
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()
        #expect(GateScripts.all.count > 1)
        for script in GateScripts.all {
            #expect(try client.command("SCRIPT", "LOAD", script.source).string == script.sha1)
        }
    }
}
