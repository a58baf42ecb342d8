import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 12, item 2: `DELETE /v1/cooldowns/{phone}` refunded every time, with the key that
/// sends, so alternating POST and DELETE got 9 sends under `--max-sends 3`, each at the
/// ladder's first step. Refunds are now a separately granted, limited right.
@Suite("Abuse: refunds are limited and granted apart", .ownThread)
struct AbuseRefundTests {
    static let bareKey = "abuse-bare-key-0123456789ab"

    /// A bare key sends and reads but may not release: every DELETE is 403, one send.
    @Test func aBareKeyCannotRefundItsOwnSends() throws {
        try withRunningGate(apiKeys: [Self.bareKey], policies: PolicySet(fallback: Policy(maxRefunds: 100))) { gate in
            let answers = try Abuse.pipeline(gate, apiKey: Self.bareKey, (0..<10).flatMap { _ in [Abuse.post(), Abuse.delete] })
            let sends = stride(from: 0, to: answers.count, by: 2).map { answers[$0].status }
            #expect(sends == [200] + Array(repeating: 429, count: 9))
            for release in stride(from: 1, to: answers.count, by: 2).map({ answers[$0] }) {
                #expect(release.status == 403)
                #expect(try Abuse.error(release)["code"] as? String == "forbidden")
            }
            #expect(try gate.redis.client().command("EXISTS", Abuse.refundsKey()) == .integer(0))
        }
    }

    /// 20 pipelined pairs with a release key, `--max-refunds 2`, a ladder of 1 h, 2 h:
    /// the first send and two refunded ones, then every DELETE is 429 `refund_limit` and
    /// changes nothing (the cooldown keeps running).
    @Test func pipelinedPairsGetOneSendPerRefundAndNoMore() throws {
        let policy = Policy(ladder: [.seconds(3600), .seconds(7200)], window: .seconds(86_400), maxSends: 3, maxRefunds: 2)
        try withRunningGate(apiKeys: ["\(Abuse.releaseKey) send,read,release"], policies: PolicySet(fallback: policy)) { gate in
            let answers = try Abuse.pipeline(gate, apiKey: Abuse.releaseKey, (0..<20).flatMap { _ in [Abuse.post(), Abuse.delete] })
            let sends = stride(from: 0, to: answers.count, by: 2).map { answers[$0] }
            let releases = stride(from: 1, to: answers.count, by: 2).map { answers[$0] }
            #expect(sends.map(\.status) == [200, 200, 200] + Array(repeating: 429, count: 17))
            // Each allowed send is at the first step: the two before it were refunded.
            for allowed in sends.prefix(3) { #expect(try Abuse.object(allowed)["retry_after"] as? Int == 3600) }
            #expect(releases.prefix(2).map(\.status) == [204, 204])
            for refused in releases.dropFirst(2) {
                #expect(refused.status == 429, "\(refused)")
                let error = try Abuse.error(refused)
                #expect(error["code"] as? String == "refund_limit")
                let wait = try #require(error["retry_after"] as? Int)
                #expect(wait > 86_000 && wait <= 86_400)
                #expect(refused.header("Retry-After") == String(wait))
                #expect(refused.header("RateLimit-Policy") == #""refund_limit";q=2"#)
            }
            #expect(try Abuse.windowCount(in: gate.redis) == 1)
            #expect(try Abuse.count(Abuse.refundsKey(), in: gate.redis) == 2)
            let peek = try gate.client(apiKey: Abuse.releaseKey).get("/v1/cooldowns/\(Abuse.encoded)")
            #expect(try peek.decode(CooldownBody.self).active, "the cooldown keeps running")
        }
    }

    /// The attacker keeps alternating POST and DELETE for as long as either works, under
    /// `--max-sends 3 --max-refunds 2 --window 1h` and a ladder of 5, 10, 20 ms (so no test
    /// time is spent waiting for cooldowns): exactly 3 + 2 sends, each at the ladder step of
    /// its place in the window, the third holding until the oldest send leaves the window.
    @Test func alternatingSendsAndRefundsGetMaxSendsPlusMaxRefunds() throws {
        let ladder = [5, 10, 20]
        let policy = Policy(
            ladder: ladder.map { .milliseconds($0) }, window: .seconds(3600), maxSends: 3, maxRefunds: 2)
        try withRunningGate(policies: PolicySet(fallback: policy)) { gate in
            let client = gate.client()
            var allowed: [[String: Any]] = []
            let began = ContinuousClock.now
            var refunds = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let send = try client.send(phone: Abuse.number)
                if send.status == 200 { allowed.append(try Abuse.object(send)) }
                let release = try client.delete("/v1/cooldowns/\(Abuse.encoded)")
                if release.status == 204, try Abuse.count(Abuse.refundsKey(), in: gate.redis) > refunds { refunds += 1 }
                // Done when neither works any more: the window is full and so are the refunds.
                if send.status == 429, release.status == 429,
                   try Abuse.object(send)["reason"] as? String == "max_sends" { break }
            }
            #expect(allowed.count == 3 + 2, "\(allowed)")
            #expect(refunds == 2)
            for answer in allowed {
                let sendsLeft = try #require(answer["sends_left"] as? Int)
                let place = 3 - sendsLeft
                let wait = try #require(answer["retry_after_ms"] as? Int)
                if place < 3 {
                    #expect(wait == ladder[place - 1], "send \(place) in the window: \(answer)")
                } else {
                    // An hour less the real time since the first send (seconds on a loaded machine).
                    let passed = Int((ContinuousClock.now - began).wholeMilliseconds)
                    #expect(wait > 3_599_000 - passed && wait <= 3_600_000, "the third send fills the window: \(answer)")
                }
            }
            // The last allowed send is the third in the window: the ladder climbed to it.
            #expect(allowed.last?["sends_left"] as? Int == 0)
            #expect(try Abuse.windowCount(in: gate.redis) == 3)
            #expect(try Abuse.count(Abuse.refundsKey(), in: gate.redis) == 2)
            let denied = try client.send(phone: Abuse.number)
            #expect(try Abuse.object(denied)["reason"] as? String == "max_sends")
        }
    }

    /// A DELETE with no cooldown running consumes no refund; `--max-refunds 0` refuses every
    /// refund with 403 `forbidden` and the cooldown keeps running.
    @Test func idleDeletesConsumeNothingAndZeroDisablesRefunds() throws {
        try withRunningGate { (gate: RunningGate) throws in
            let client = gate.client()
            for _ in 0..<5 { #expect(try client.delete("/v1/cooldowns/\(Abuse.encoded)").status == 204) }
            #expect(try gate.redis.client().command("EXISTS", Abuse.refundsKey()) == .integer(0))
            #expect(try client.send(phone: Abuse.number).status == 200)
            #expect(try client.delete("/v1/cooldowns/\(Abuse.encoded)").status == 204, "the default one refund is still there")
            #expect(try client.send(phone: Abuse.number).status == 200)
            #expect(try client.delete("/v1/cooldowns/\(Abuse.encoded)").status == 429)
        }
        try withRunningGate(policies: PolicySet(fallback: Policy(maxRefunds: 0))) { (gate: RunningGate) throws in
            let client = gate.client()
            #expect(try client.send(phone: Abuse.number).status == 200)
            let refused = try client.delete("/v1/cooldowns/\(Abuse.encoded)")
            #expect(refused.status == 403)
            #expect(try Abuse.error(refused)["code"] as? String == "forbidden")
            #expect(try client.send(phone: Abuse.number).status == 429)
        }
    }
}
