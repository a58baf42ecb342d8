import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 12, item 1: the per-IP cap held its entries by `purpose:number@<ms>`, so a POST,
/// a DELETE and a POST of one number in the same millisecond overwrote each other's
/// entry, and 20 POST+DELETE pairs from one client_ip got 15 sends past a cap of 5.
@Suite("Abuse: the per-IP cap against pipelined sends and refunds", .ownThread)
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
            for refused in sends.dropFirst(5) { try Abuse.expectLimited(refused, "ip_limit", waits: 3_501...3_600) }
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

    /// Review of issue 12: the IP's set is shared by the purposes that cap IPs, and each
    /// trimmed it by its own window, so a purpose with a short window (here 300 ms) erased
    /// the sends a purpose with an hour's window still counted, and that one's cap gave
    /// way. The set is now trimmed by the longest window; each purpose counts its own.
    @Test func aPurposeWithAShortIPWindowCannotEraseAnotherPurposesSends() throws {
        let strict = Policy(ladder: [.seconds(60)], ipMaxSends: 3, ipWindow: .seconds(3600))
        let lenient = Policy(ladder: [.seconds(60)], ipMaxSends: 4, ipWindow: .milliseconds(300))
        try withRunningGate(policies: PolicySet(fallback: strict, purposes: ["marketing": lenient])) { gate in
            let client = gate.client()
            func send(_ phone: String, purpose: String) throws -> RawHTTPResponse {
                try client.send(#"{"phone": "\#(phone)", "purpose": "\#(purpose)", "client_ip": "\#(Self.clientIP)"}"#)
            }
            for index in 0..<3 { #expect(try send("+861380013800\(index)", purpose: "default").status == 200) }
            #expect(try send("+8613800138009", purpose: "default").status == 429)
            usleep(400_000)  // the strict sends are now older than the lenient window
            // The lenient purpose reaches its own cap, which made it trim the shared set.
            var lenientAllowed = 0
            for index in 0..<6 where try send("+861390013900\(index)", purpose: "marketing").status == 200 { lenientAllowed += 1 }
            #expect(lenientAllowed == 4)
            // The strict cap still holds: its three sends are still in the set.
            let again = try send("+8613800138008", purpose: "default")
            #expect(again.status == 429, "\(again)")
            #expect(try Abuse.object(again)["reason"] as? String == "ip_limit")
            let strictLeft = try gate.redis.client().command("ZCOUNT", Self.ipKey, "-inf", "+inf").integer ?? 0
            #expect(strictLeft >= 3, "the shared set lost the strict purpose's sends: \(strictLeft) left")
            let expiry = try gate.redis.client().command("PTTL", Self.ipKey).integer ?? 0
            #expect(expiry > 3_500_000, "the set's expiry was shortened to \(expiry) ms")
            // Past the lenient window the strict cap holds still (a set whose expiry had
            // been cut to the lenient window would be gone, and the cap with it).
            usleep(500_000)
            let later = try send("+8613800138007", purpose: "default")
            #expect(later.status == 429, "\(later)")
        }
    }
}
