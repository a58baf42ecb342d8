import Foundation
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// `reserveCooldown` is `reserve` cut down to a single cooldown that counts nothing.
/// Both run here on a real Redis from the same starting state, and must give the same
/// answer and leave the same keys behind.
@Suite("Reserve scripts: the plain-cooldown script answers as the full one")
struct ReserveScriptTests {
    static let cooldown = "rg:{default:+8613800138000}:cooldown"
    static let tokenKey = "rg:countdown:{AAAAAAAAAAAAAAAAAAAAAA}"
    static let token = "AAAAAAAAAAAAAAAAAAAAAA"
    static let step = "60000"

    /// The starting states: no cooldown, one running, and one stored without an expiry
    /// (which both scripts repair by giving it the policy's cooldown).
    static let states: [(String, [[String]])] = [
        ("no cooldown", []),
        ("running cooldown", [["SET", cooldown, "BBBBBBBBBBBBBBBBBBBBBB", "PX", "30000"]]),
        ("cooldown without expiry", [["SET", cooldown, "BBBBBBBBBBBBBBBBBBBBBB"]]),
    ]

    @Test(arguments: states.map(\.0))
    func bothScriptsAgree(state: String) async throws {
        let setup = try #require(Self.states.first { $0.0 == state }).1
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()

        let full = try Self.run(client, setup: setup, [
            "EVAL", GateScripts.reserve.source, "6",
            Self.cooldown, "rg:{default:+8613800138000}:sends", "rg:{default:+8613800138000}:no-ip",
            "rg:{default:+8613800138000}:no-idem", Self.tokenKey, "rg:{default:+8613800138000}:idem",
            "0", "0", "0", "0", "", "86400000", Self.token, "", "1", "0", Self.step,
        ])
        let plain = try Self.run(client, setup: setup, [
            "EVAL", GateScripts.reserveCooldown.source, "2", Self.cooldown, Self.tokenKey, Self.token, Self.step,
        ])

        // Field 2 (remaining ms) and 5 (Redis time) move with the clock; the rest is exact.
        let fullItems = try #require(full.reply.array), plainItems = try #require(plain.reply.array)
        #expect(fullItems.count == 8 && plainItems.count == 8, "\(full.reply) vs \(plain.reply)")
        for index in [0, 1, 3, 4, 6, 7] {
            #expect(fullItems[index] == plainItems[index], "\(state): field \(index): \(full.reply) vs \(plain.reply)")
        }
        let remaining = (try #require(fullItems[2].integer), try #require(plainItems[2].integer))
        #expect(abs(remaining.0 - remaining.1) < 1_000, "\(state): \(full.reply) vs \(plain.reply)")
        #expect(full.keys == plain.keys, "\(state): keys \(full.keys) vs \(plain.keys)")
        for (key, ttl) in full.ttls { #expect(abs(ttl - (plain.ttls[key] ?? -100)) < 1_000, "\(state): TTL of \(key)") }
    }

    /// Runs one script call on an empty database after `setup`, and reads back every key.
    static func run(_ client: RedisTestClient, setup: [[String]], _ call: [String]) throws
        -> (reply: RESPValue, keys: [String: RESPValue], ttls: [String: Int])
    {
        _ = try client.command("FLUSHALL")
        for command in setup { _ = try client.command(command) }
        let reply = try client.command(call)
        var keys: [String: RESPValue] = [:], ttls: [String: Int] = [:]
        for name in try client.command("KEYS", "*").array ?? [] {
            let key = try #require(name.string)
            keys[key] = try client.command("GET", key)
            ttls[key] = try #require(try client.command("PTTL", key).integer)
        }
        return (reply, keys, ttls)
    }
}
