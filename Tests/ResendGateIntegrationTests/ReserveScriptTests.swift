import Foundation
import ResendGate
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// The default policy is decided by `SET <cooldown> <nonce> NX PX <ms> GET` and `PTTL`
/// (Cooldowns.swift) instead of the `reserve` script. Both run here on a real
/// Redis from the same starting state, and must give the same answer and leave the same
/// keys behind.
@Suite("Plain cooldown: SET NX PX GET and PTTL answer as the reserve script", .ownThread)
struct ReserveScriptTests {
    static let cooldown = gateKey(.cooldown, "+8613800138000")
    static let nonce = "AAAAAAAAAAAAAAAA"
    static let step = "60000"

    /// The starting states: no cooldown, one running, and one stored without an expiry
    /// (which both repair by giving it the policy's cooldown).
    static let states: [(String, [[String]])] = [
        ("no cooldown", []),
        ("running cooldown", [["SET", cooldown, "BBBBBBBBBBBBBBBB", "PX", "30000"]]),
        ("cooldown without expiry", [["SET", cooldown, "BBBBBBBBBBBBBBBB"]]),
    ]

    @Test(arguments: states.map(\.0))
    func commandsAgreeWithTheScript(state: String) async throws {
        let setup = try #require(Self.states.first { $0.0 == state }).1
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()
        // Each run's deadlines and times to live are read against Redis's clock, which runs
        // on while this process stands frozen (CI): a second apart, plus any such stall.
        let watched = StallWatch.mark()

        // The default policy's reserve script, as a gate writes it; '' for now: it asks TIME.
        let source = ReserveScripts.source(ReserveVariant(
            policy: CompiledPolicy(.default), countingIP: false, cooldownInWindow: false, idempotencyLifetimeMilliseconds: 86_400_000,
            longestIPWindowMilliseconds: 0))
        let full = try Self.run(client, setup: setup, [[
            "EVAL", source, "4",
            Self.cooldown, gateKey(.window, "+8613800138000"), gateKey(.noIP, "+8613800138000"),
            gateKey(.noIdempotency, "+8613800138000"),
            "", Self.nonce, "",
        ]])
        let plain = try Self.run(client, setup: setup, [
            ["SET", Self.cooldown, Self.plainValue(), "NX", "PX", Self.step, "GET"],
            ["PTTL", Self.cooldown],
        ])
        // The gate's repair of a key without expiry (PEXPIRE ... NX), as it sends it.
        if plain.replies[1].integer == -1 {
            _ = try client.command("PEXPIRE", Self.cooldown, Self.step, "NX")
        }
        let keys = try Self.readKeys(client)

        let script = try #require(full.replies[0].string.flatMap(ReserveAnswer.init(answer:)), "\(full.replies)")
        #expect(script.observed.isEmpty, "nothing is observed: \(full.replies)")
        let allowed = plain.replies[0] == .null
        #expect(script.allowed == allowed, "\(state): \(full.replies) vs \(plain.replies)")
        // The cooldown's nonce: the script's, GET's reply's first 16 characters when refused.
        if allowed {
            #expect(script.nonce == Self.nonce)
        } else {
            #expect(script.nonce == plain.replies[0].string?.prefix(16), "\(state): \(full.replies) vs \(plain.replies)")
        }
        let scriptWait = Int(script.waitMilliseconds)
        let plainWait = allowed ? 60_000 : (plain.replies[1].integer == -1 ? 60_000 : try #require(plain.replies[1].integer))
        let slack = 1_000 + Int(StallWatch.shared.stalled(from: watched) / .milliseconds(1))
        #expect(abs(scriptWait - plainWait) < slack, "\(state): \(full.replies) vs \(plain.replies)")
        #expect(full.keys.keys == keys.keys.keys, "\(state): keys \(full.keys) vs \(keys.keys)")
        // Both hold the nonce and the deadline (the script's by Redis's clock, the gate's
        // by its own: the same within a second).
        for (key, value) in full.keys {
            #expect(Self.sameValue(keys.keys[key], value, within: Int64(slack)), "\(state): value of \(key): \(String(describing: keys.keys[key])) vs \(value)")
        }
        for (key, ttl) in full.ttls { #expect(abs(ttl - (keys.ttls[key] ?? -100)) < slack, "\(state): TTL of \(key)") }
    }

    /// A deadline further ahead than the cooldown (written on a clock ahead of Redis's, or a
    /// longer cooldown's) is not the script's word either: it answers the key's PTTL, never
    /// more than the cooldown, as the plain path does (`Cooldowns`; it trusted up to a second
    /// more, so the two paths told one refused client different waits).
    @Test func aDeadlineBeyondTheCooldownIsAnsweredByTheKeysLifeInTheScriptToo() async throws {
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let ahead = CooldownValue(nonce: CooldownNonce(text: "BBBBBBBBBBBBBBBB"[...])!, deadlineMilliseconds: now + 60_500).text
        let source = ReserveScripts.source(ReserveVariant(
            policy: CompiledPolicy(.default), countingIP: false, cooldownInWindow: false, idempotencyLifetimeMilliseconds: 86_400_000,
            longestIPWindowMilliseconds: 0))
        let full = try Self.run(client, setup: [["SET", Self.cooldown, ahead, "PX", Self.step]], [[
            "EVAL", source, "4",
            Self.cooldown, gateKey(.window, "+8613800138000"), gateKey(.noIP, "+8613800138000"),
            gateKey(.noIdempotency, "+8613800138000"),
            "", Self.nonce, "",
        ]])
        let script = try #require(full.replies[0].string.flatMap(ReserveAnswer.init(answer:)), "\(full.replies)")
        #expect(!script.allowed && script.reason == .cooldown && script.nonce == "BBBBBBBBBBBBBBBB")
        #expect(script.waitMilliseconds <= 60_000 && script.waitMilliseconds > 50_000, "\(full.replies)")
    }

    /// What the gate's plain path writes: the nonce and the deadline (`CooldownValue`).
    static func plainValue() -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return CooldownValue(nonce: CooldownNonce(text: nonce[...])!, deadlineMilliseconds: now + Int64(step)!).text
    }

    /// Two cooldown values alike: the same text, or the same nonce with deadlines within
    /// `slack` ms (a second, and any stall of this process between them).
    static func sameValue(_ a: RESPValue?, _ b: RESPValue, within slack: Int64 = 1_000) -> Bool {
        if a == b { return true }
        guard let a = a?.string, let b = b.string,
              let left = CooldownValue(text: a[...]), let right = CooldownValue(text: b[...]),
              let l = left.deadlineMilliseconds, let r = right.deadlineMilliseconds else { return false }
        return left.nonce == right.nonce && abs(l - r) < slack
    }

    /// Runs the commands on an empty database after `setup`, and reads back every key.
    static func run(_ client: RedisTestClient, setup: [[String]], _ calls: [[String]]) throws
        -> (replies: [RESPValue], keys: [String: RESPValue], ttls: [String: Int])
    {
        _ = try client.command("FLUSHALL")
        for command in setup { _ = try client.command(command) }
        let replies = try calls.map { try client.command($0) }
        let read = try readKeys(client)
        return (replies, read.keys, read.ttls)
    }

    static func readKeys(_ client: RedisTestClient) throws -> (keys: [String: RESPValue], ttls: [String: Int]) {
        var keys: [String: RESPValue] = [:], ttls: [String: Int] = [:]
        for name in try client.command("KEYS", "*").array ?? [] {
            let key = try #require(name.string)
            keys[key] = try client.command("GET", key)
            // Bound to a non-optional first: assigned straight into the [String: Int] dictionary,
            // #require took Int? for its value type and so could never fail.
            let ttl: Int = try #require(client.command("PTTL", key).integer)
            ttls[key] = ttl
        }
        return (keys, ttls)
    }
}
