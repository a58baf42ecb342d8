@testable import ResendGate
import ResendGateTestSupport
import Testing

/// An idempotency record is written twice, by the reserve script (one Redis) and, on a
/// cluster, by Swift (`ReserveAnswer.record(of:)`) through `idempotency-put.lua`, and read by
/// `ReserveAnswer`; both scripts keep it as `idempotency-keep.lua` says. From the records
/// the reserve script stores for allowed, refused and observed sends, Swift's writer makes
/// the same bytes, and `idempotency-put.lua` keeps them as long as the reserve script did.
@Suite("An idempotency record: the reserve script, Swift and idempotency-put agree", .ownThread)
struct IdempotencyRecordLayoutTests {
    static let phone = "+8613800138000"

    @Test(arguments: [false, true])
    func swiftWritesAndKeepsWhatTheReserveScriptWrites(observing: Bool) async throws {
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()
        var policy = Policy(ladder: [.seconds(60), .seconds(120)], maxSends: 3)
        if observing { policy.observe = [.cooldown] }
        let source = ReserveScripts.source(ReserveVariant(
            policy: CompiledPolicy(policy), countingIP: false, cooldownInWindow: true, idempotencyLifetimeMilliseconds: 86_400_000,
            longestIPWindowMilliseconds: 0))
        let put = GateScripts.idempotencyPut.source
        var kinds: Set<String> = []
        for call in 0..<5 {
            let key = "rg:idem:{\(call)}", fingerprint = "\(Self.phone)|default|| caller \(call)"
            let nonce = String(repeating: "ABCDEFGH", count: 2)
            _ = try client.command(
                "EVAL", source, "4", gateKey(.cooldown, Self.phone), gateKey(.window, Self.phone), gateKey(.noIP, Self.phone),
                key, "", nonce, fingerprint)
            let stored = try #require(try client.command("GET", key).string)
            guard case .answer(let answer) = ReserveAnswer.record(stored, fingerprint: fingerprint) else {
                Issue.record("unreadable record \(stored)")
                continue
            }
            kinds.insert(answer.allowed ? (answer.observed.isEmpty ? "allowed" : "observed") : "refused")
            let decision = Decision(
                SendRequest(phone: try PhoneNumber(parsing: Self.phone), purpose: .default), refusedBy: answer.reason,
                wait: answer.waitMilliseconds, now: answer.nowMilliseconds, next: answer.nextMilliseconds,
                sendsInWindow: answer.sends, observed: answer.observed)
            let record = ReserveAnswer.record(of: decision, nonce: String(answer.nonceField), fingerprint: fingerprint)
            #expect(record == stored, "call \(call)")
            // Swift's record through the cluster's script: the same bytes, kept as long.
            let twin = "rg:idem:{twin\(call)}"
            let first = try client.command(
                "EVAL", put, "1", twin, record, "86400000", answer.allowed ? "1" : "0", String(answer.waitMilliseconds))
            #expect(first.integer == 1)
            #expect(try client.command("GET", twin).string == stored)
            let kept = try #require(try client.command("PTTL", key).integer)
            let twinKept = try #require(try client.command("PTTL", twin).integer)
            #expect(abs(kept - twinKept) <= 2_000, "call \(call): \(kept) vs \(twinKept)")
            let expected = answer.allowed ? 86_400_000 : min(Int(answer.waitMilliseconds), 60_000)
            #expect(twinKept <= expected && twinKept > expected - 5_000, "call \(call): \(twinKept) of \(expected)")
            // The first record stays.
            #expect(try client.command("EVAL", put, "1", twin, "other", "86400000", "1", "0").integer == 0)
        }
        #expect(kinds.contains("allowed") && kinds.contains("refused") && kinds.contains("observed") == observing, "\(kinds)")
    }
}
