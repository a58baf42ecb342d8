import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 12, item 1: the per-IP cap held its entries by `purpose:number@<ms>`, so a POST,
/// a DELETE and a POST of one number in the same millisecond overwrote each other's
/// entry, and 20 POST+DELETE pairs from one client_ip got 15 sends past a cap of 5.
@Suite("Abuse: the per-IP cap against pipelined sends and refunds")
struct AbuseIPCapTests {
    static let clientIP = "203.0.113.9"
    static let ipKey = ipSendsKey("203.0.113.9")
    /// Refunds allowed generously, so that only the IP's cap can stop the pairs.
    static let policy = Policy(ladder: [.seconds(60)], ipMaxSends: 5, ipWindow: .seconds(3600), maxRefunds: 100)

    /// Keyless loopback (every scope) and a key that names `release`.
    @Test(arguments: [false, true])
    func twentyPipelinedSendAndReleasePairsFromOneIPGetExactlyFive(withKey: Bool) throws {
        let keys = withKey ? ["\(Abuse.releaseKey) send,read,release"] : []
        try withRunningGate(apiKeys: keys, policies: PolicySet(fallback: Self.policy)) { gate in
            let body = #"{"phone": "\#(Abuse.number)", "client_ip": "\#(Self.clientIP)"}"#
            let pairs = (0..<20).flatMap { _ in [Abuse.post(body), Abuse.delete] }
            let answers = try Abuse.pipeline(gate, apiKey: withKey ? Abuse.releaseKey : nil, pairs)

            let sends = stride(from: 0, to: answers.count, by: 2).map { answers[$0] }
            let releases = stride(from: 1, to: answers.count, by: 2).map { answers[$0] }
            #expect(sends.filter { $0.status == 200 }.count == 5, "\(sends.map(\.status))")
            #expect(sends.prefix(5).allSatisfy { $0.status == 200 }, "the first five pairs are sent and refunded")
            for refused in sends.dropFirst(5) {
                #expect(refused.status == 429)
                let body = try Abuse.object(refused)
                #expect(body["reason"] as? String == "ip_limit", "\(refused)")
                let wait = try #require(body["retry_after"] as? Int)
                #expect(wait > 3_500 && wait <= 3_600)
                #expect(refused.header("Retry-After") == String(wait))
            }
            // Each of the five allowed sends was refunded; the rest had nothing to refund.
            #expect(releases.allSatisfy { $0.status == 204 }, "\(releases.map(\.status))")

            // One entry per allowed send, none lowered by a refund.
            #expect(try Abuse.count(Self.ipKey, in: gate.redis) == 5)
            #expect(try Abuse.count(Abuse.refundsKey(), in: gate.redis) == 5)
            let members = try #require(try gate.redis.client().command("ZRANGE", Self.ipKey, "0", "-1").array)
            #expect(Set(members.compactMap(\.string)).count == 5)

            // The cap holds for every number from that IP.
            let other = try gate.client(apiKey: withKey ? Abuse.releaseKey : nil)
                .send(#"{"phone": "+8613900139000", "client_ip": "\#(Self.clientIP)"}"#)
            #expect(other.status == 429)
            #expect(try Abuse.object(other)["reason"] as? String == "ip_limit")
            #expect(try Abuse.count(Self.ipKey, in: gate.redis) == 5)
        }
    }
}
