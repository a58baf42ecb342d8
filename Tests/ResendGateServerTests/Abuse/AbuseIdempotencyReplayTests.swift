import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 12, item 3: after POST with `Idempotency-Key: k1`, DELETE and the same POST again,
/// the replay still answered 200 allowed for a send that had been refunded. A refund now
/// voids the record of the send it refunds, so the retry is decided afresh, and counts.
@Suite("Abuse: a refunded send's Idempotency-Key is not replayed", .ownThread)
struct AbuseIdempotencyReplayTests {
    static let policy = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 3, maxRefunds: 2)

    @Test func aRetryAfterARefundIsDecidedAfreshAndCounts() throws {
        try withRunningGate(policies: PolicySet(fallback: Self.policy)) { gate in
            let key = [("Idempotency-Key", "k1")]
            let answers = try Abuse.pipeline(gate, apiKey: nil, [Abuse.post(headers: key), Abuse.delete, Abuse.post(headers: key)])
            #expect(answers.map(\.status) == [200, 204, 200])
            let first = try Abuse.object(answers[0]), retried = try Abuse.object(answers[2])
            #expect(answers[2].header("Idempotent-Replayed") == nil, "decided afresh, not replayed: \(answers[2])")
            #expect(retried["countdown_token"] as? String != first["countdown_token"] as? String)
            #expect(retried["sends_left"] as? Int == 2, "the refunded send left the window; the retry counts")
            #expect(try Abuse.windowCount(in: gate.redis) == 1)
            // The record now holds the retry's answer, and replays it.
            let records = try #require(try gate.redis.client().command("KEYS", "rg:idem:*").array).compactMap(\.string)
            #expect(records.count == 1)
            // Its cooldown's nonce, which the retry's token names: the cooldown key holds it.
            // (The record is one string, "allowed reason wait sends next now nonce fingerprint".)
            let record = try gate.redis.client().command("GET", try #require(records.first)).string ?? ""
            let nonce = record.split(separator: " ", omittingEmptySubsequences: false).dropFirst(6).first.map(String.init)
            #expect(nonce?.utf8.count == 16)
            // (After the nonce and its deadline, a space and the record's name: the link a
            // refund voids.)
            let held = try gate.redis.client().command("GET", gateKey(.cooldown, Abuse.number)).string ?? ""
            #expect(held.hasPrefix(nonce ?? "-") && held.hasSuffix(" " + records[0]) && held.utf8.count == 29 + records[0].utf8.count)
            let replay = try gate.client().send(#"{"phone": "\#(Abuse.number)"}"#, headers: [("Content-Type", "application/json")] + key)
            #expect(replay.status == 200)
            #expect(replay.header("Idempotent-Replayed") == "true")
            #expect(try Abuse.object(replay)["countdown_token"] as? String == retried["countdown_token"] as? String)
        }
    }

    /// A refund voids only the record of the send it refunds; one refused by the refund
    /// limit voids nothing, so the retry is still a replay.
    @Test func aRefusedRefundLeavesTheRecord() throws {
        try withRunningGate(policies: PolicySet(fallback: Policy(ladder: [.seconds(60)], maxRefunds: 1))) { gate in
            let k1 = [("Idempotency-Key", "k1")], k2 = [("Idempotency-Key", "k2")]
            let answers = try Abuse.pipeline(gate, apiKey: nil, [
                Abuse.post(headers: k1), Abuse.delete, Abuse.post(headers: k2), Abuse.delete, Abuse.post(headers: k2),
                Abuse.post(headers: k1),
            ])
            #expect(answers.map(\.status) == [200, 204, 200, 429, 200, 429])
            #expect(try Abuse.error(answers[3])["code"] as? String == "refund_limit")
            // k2's send was not refunded: its retry is a replay.
            #expect(answers[4].header("Idempotent-Replayed") == "true")
            #expect(try Abuse.object(answers[4])["countdown_token"] as? String == Abuse.object(answers[2])["countdown_token"] as? String)
            // k1's send was refunded, so k1's retry is decided afresh: k2's cooldown refuses it.
            #expect(answers[5].header("Idempotent-Replayed") == nil)
            #expect(try Abuse.object(answers[5])["reason"] as? String == "cooldown")
        }
    }

    /// Security review: idempotency keys were one namespace for every API key, so key B
    /// replaying key A's `Idempotency-Key` got A's answer (and A's countdown token), and
    /// could spoil A's key with a request of its own. Each API key now has its own.
    @Test func twoAPIKeysWithOneIdempotencyKeyGetIndependentDecisions() throws {
        let keyA = "abuse-caller-a-0123456789", keyB = "abuse-caller-b-0123456789"
        let policy = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 3)
        try withRunningGate(apiKeys: [keyA, keyB], policies: PolicySet(fallback: policy)) { gate in
            let k1 = [("Content-Type", "application/json"), ("Idempotency-Key", "k1")]
            let body = #"{"phone": "\#(Abuse.number)"}"#
            let a = try gate.client(apiKey: keyA).send(body, headers: k1)
            #expect(a.status == 200)
            let tokenA = try Abuse.object(a)["countdown_token"] as? String
            #expect(tokenA != nil)

            // B, same key and body: decided afresh (the number's cooldown refuses it), not A's replay.
            let b = try gate.client(apiKey: keyB).send(body, headers: k1)
            #expect(b.status == 429, "\(b)")
            #expect(b.header("Idempotent-Replayed") == nil)
            #expect(try Abuse.object(b)["allowed"] as? Bool == false)
            // B, same key, another number: B's own key already holds B's refusal: 422, as for any caller.
            let other = try gate.client(apiKey: keyB).send(#"{"phone": "+8613800138001"}"#, headers: k1)
            #expect(other.status == 422, "B's k1 now holds B's first answer, a different request: \(other)")
            #expect(try Abuse.error(other)["code"] as? String == "idempotency_key_reused")

            // A's retry still replays A's answer; B's retry replays B's.
            let retryA = try gate.client(apiKey: keyA).send(body, headers: k1)
            #expect(retryA.status == 200)
            #expect(retryA.header("Idempotent-Replayed") == "true")
            #expect(try Abuse.object(retryA)["countdown_token"] as? String == tokenA)
            let retryB = try gate.client(apiKey: keyB).send(body, headers: k1)
            #expect(retryB.status == 429)
            #expect(retryB.header("Idempotent-Replayed") == "true")
            #expect(try Abuse.windowCount(in: gate.redis) == 1)
            #expect(try gate.redis.client().command("KEYS", "rg:idem:*").array?.count == 2)
        }
    }

    /// A second key's first request with an Idempotency-Key A already used, for another
    /// number, is its own: allowed, not 422.
    @Test func anotherCallersKeyDoesNotBlockMine() throws {
        let keyA = "abuse-caller-a-0123456789", keyB = "abuse-caller-b-0123456789"
        try withRunningGate(apiKeys: [keyA, keyB], policies: PolicySet(fallback: Policy(ladder: [.seconds(60)]))) { gate in
            let k1 = [("Content-Type", "application/json"), ("Idempotency-Key", "k1")]
            #expect(try gate.client(apiKey: keyA).send(#"{"phone": "+8613800138000"}"#, headers: k1).status == 200)
            let b = try gate.client(apiKey: keyB).send(#"{"phone": "+8613800138001"}"#, headers: k1)
            #expect(b.status == 200, "\(b)")
            #expect(b.header("Idempotent-Replayed") == nil)
        }
    }

    /// Review of issue 12: every request with a fresh Idempotency-Key wrote a record kept
    /// 24 h, denials included, so denied requests (which cost nothing else) could fill
    /// Redis. A denial's record now lives for its wait, at most a minute; an allowed send's
    /// still lives the full lifetime.
    @Test func denialsUnderFreshKeysAreKeptAMinuteAtMost() throws {
        let slow = Policy(ladder: [.seconds(3600)])
        try withRunningGate(policies: PolicySet(fallback: slow)) { gate in
            let allowed = try gate.client().send(#"{"phone": "\#(Abuse.number)"}"#, headers: [("Content-Type", "application/json"), ("Idempotency-Key", "first")])
            #expect(allowed.status == 200)
            let requests = (0..<200).map { Abuse.post(headers: [("Idempotency-Key", "fresh-\($0)")]) }
            let answers = try Abuse.pipeline(gate, apiKey: nil, requests)
            #expect(answers.allSatisfy { $0.status == 429 })
            let redis = try gate.redis.client()
            let records = try #require(try redis.command("KEYS", "rg:idem:*").array).compactMap(\.string)
            #expect(records.count == 201)
            var longLived = 0
            for record in records where (try redis.command("PTTL", record).integer ?? 0) > 60_000 { longLived += 1 }
            #expect(longLived == 1, "only the allowed send's record lives past a minute, not \(longLived)")
        }
    }
}
