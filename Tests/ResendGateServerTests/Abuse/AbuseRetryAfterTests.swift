import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 12, item 4: with `--cooldown 1s,2s --max-sends 2 --window 1h` the second send
/// answered `retry_after 2`, the peek said `active: false` two seconds later, and the next
/// POST was 429 `max_sends` with 3 597 s. Every answer now gives the real wait.
@Suite("Abuse: retry_after is the real wait", .ownThread)
struct AbuseRetryAfterTests {
    /// The 1 s cooldown is ended by moving Redis's clock past it (no test time waits on it).
    @Test func theSendThatFillsTheWindowAnswersWithTheWindowEverywhere() throws {
        let policy = Policy(ladder: [.seconds(1), .seconds(2)], window: .seconds(3600), maxSends: 2)
        try withRunningGate(policies: PolicySet(fallback: policy)) { gate in
            let client = gate.client()
            let first = try Abuse.object(try client.send(phone: Abuse.number))
            #expect(first["retry_after"] as? Int == 1)
            #expect(first["sends_left"] as? Int == 1)
            try gate.redis.client().runOut(Abuse.cooldownKey())
            #expect(try client.get("/v1/cooldowns/\(Abuse.encoded)").decode(CooldownBody.self).active == false)

            let second = try client.send(phone: Abuse.number)
            #expect(second.status == 200)
            let allowed = try Abuse.object(second)
            #expect(allowed["sends_left"] as? Int == 0)
            let wait = try #require(allowed["retry_after"] as? Int)
            #expect(wait > 3_590 && wait <= 3_600, "not the 2 s step: \(allowed)")
            let token = try #require(allowed["countdown_token"] as? String)

            // The peek stays active for that long: the cooldown key lives until then.
            let peek = try client.get("/v1/cooldowns/\(Abuse.encoded)").decode(CooldownBody.self)
            #expect(peek.active)
            #expect(peek.retry_after > 3_590 && peek.retry_after <= wait)
            let pttl = try #require(try gate.redis.client().command("PTTL", Abuse.cooldownKey()).integer)
            #expect(pttl > 3_590_000)

            // The countdown token counts to the same moment, and so does its stream.
            let countdown = try Abuse.object(try client.get("/v1/countdowns/\(token)"))
            #expect(countdown["active"] as? Bool == true)
            let counted = try #require(countdown["retry_after"] as? Int)
            #expect(counted > 3_590 && counted <= wait)
            let stream = try HTTPTestClient(port: gate.port, timeout: .seconds(5)).openStream("/v1/countdowns/\(token)/events")
            defer { stream.connection.close() }
            let tick = try #require(try stream.next())
            #expect(tick.event == "tick")
            let ticked = try #require(try JSONSerialization.jsonObject(with: Data(tick.data.utf8)) as? [String: Any])
            let streamed = try #require(ticked["retry_after"] as? Int)
            #expect(streamed > 3_590 && streamed <= wait)

            // The next POST is refused by max_sends with the same wait.
            let third = try client.send(phone: Abuse.number)
            #expect(third.status == 429)
            let denied = try Abuse.object(third)
            #expect(denied["reason"] as? String == "max_sends")
            let deniedWait = try #require(denied["retry_after"] as? Int)
            #expect(deniedWait <= wait && deniedWait >= wait - 1)
            #expect(third.header("Retry-After") == String(deniedWait))
            #expect(denied["countdown_token"] as? String == token)
        }
    }

    /// A window filled while the cooldown key lasted only its step (data from before the
    /// stretched cooldown, or a lowered --max-sends): the peek still reads the window.
    @Test func aPeekReadsAFullWindowEvenWithoutACooldownKey() throws {
        let policy = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 1)
        try withRunningGate(policies: PolicySet(fallback: policy)) { gate in
            let client = gate.client()
            #expect(try client.send(phone: Abuse.number).status == 200)
            // Stands in for a cooldown that ended while the window stays full.
            #expect(try gate.redis.client().command("DEL", Abuse.cooldownKey()) == .integer(1))
            let peek = try client.get("/v1/cooldowns/\(Abuse.encoded)").decode(CooldownBody.self)
            #expect(peek.active)
            #expect(peek.retry_after > 3_590 && peek.retry_after <= 3_600, "\(peek)")
            let denied = try Abuse.object(try client.send(phone: Abuse.number))
            #expect(denied["reason"] as? String == "max_sends")
            #expect((denied["retry_after"] as? Int).map { $0 <= Int(peek.retry_after) && $0 >= Int(peek.retry_after) - 1 } == true)
        }
    }

    /// A POST with client_ip that fills the IP's cap answers with the IP's wait; the peek and
    /// the countdown token follow the number's own limits (the cap is the client's).
    @Test func theSendThatFillsTheIPCapAnswersWithTheIPsWait() throws {
        let policy = Policy(ladder: [.seconds(60)], ipMaxSends: 2, ipWindow: .seconds(3600))
        try withRunningGate(policies: PolicySet(fallback: policy)) { gate in
            let client = gate.client()
            let ip = "198.51.100.4"
            let first = try Abuse.object(try client.send(#"{"phone": "+8613900139000", "client_ip": "\#(ip)"}"#))
            #expect(first["retry_after"] as? Int == 60)
            let filling = try Abuse.object(try client.send(#"{"phone": "\#(Abuse.number)", "client_ip": "\#(ip)"}"#))
            #expect(filling["allowed"] as? Bool == true)
            let wait = try #require(filling["retry_after"] as? Int)
            #expect(wait > 3_590 && wait <= 3_600)
            let refused = try client.send(#"{"phone": "+8613700137000", "client_ip": "\#(ip)"}"#)
            #expect(try Abuse.object(refused)["reason"] as? String == "ip_limit")
            #expect(refused.header("Retry-After").flatMap(Int.init).map { $0 <= wait && $0 >= wait - 1 } == true)
            let peek = try client.get("/v1/cooldowns/\(Abuse.encoded)").decode(CooldownBody.self)
            #expect(peek.retry_after == 60)
        }
    }
}
