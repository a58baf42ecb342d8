import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// Issue 34, finding 4: an IPv4 client written as IPv6 other than `::ffff:` (IPv4-compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`) got a bucket of its own in
/// the per-IP cap and the request limit, so each spelling was a fresh allowance.
@Suite("Abuse: one client spelled as IPv4 and as IPv6", .ownThread)
struct AbuseIPSpellingTests {
    /// 203.0.113.7 in each form, each spelled twice (dotted and hex, or two hosts of the site).
    static let spellings = [
        "203.0.113.7", "::ffff:203.0.113.7", "::203.0.113.7", "::cb00:7107", "64:ff9b::203.0.113.7",
        "64:ff9b::cb00:7107", "2002:cb00:7107::1", "2002:cb00:7107:9::2",
    ]

    static func send(_ client: HTTPTestClient, _ index: Int, ip: String) throws -> RawHTTPResponse {
        try client.send(#"{"phone": "+86138001380\#(String(format: "%02d", index))", "client_ip": "\#(ip)"}"#)
    }

    @Test func everySpellingSharesTheIPCap() throws {
        let policy = Policy(ladder: [.seconds(60)], ipMaxSends: 3, ipWindow: .seconds(3600))
        try withRunningGate(policies: PolicySet(fallback: policy)) { gate in
            let client = gate.client()
            // Twice through the spellings, a new number each time: only the cap can refuse.
            var allowed: [String] = []
            for (index, ip) in (Self.spellings + Self.spellings).enumerated() {
                let answer = try Self.send(client, index, ip: ip)
                if answer.status == 200 { allowed.append(ip); continue }
                #expect(try Abuse.object(answer)["reason"] as? String == "ip_limit", "\(ip): \(answer)")
            }
            #expect(allowed == Array(Self.spellings.prefix(3)), "one client got \(allowed.count) sends past a cap of 3")
            #expect(try Abuse.count(ipSendsKey("203.0.113.7"), in: gate.redis) == 3)
            // The cap keys nothing but the IPv4 address.
            let keys = try gate.redis.client().command("KEYS", "*ip*").array?.compactMap(\.string) ?? []
            #expect(keys == [ipSendsKey("203.0.113.7")], "\(keys)")
        }
    }

    /// One worker, so that this checks the spellings alone (the workers' shared count has
    /// its own test, `RequestLimitTests`).
    @Test func everySpellingSharesTheRequestLimit() throws {
        try TestGate.with({
            try TestGate(workers: 1, ipMaxRequests: RequestRate(count: 3, period: .seconds(3600)), waitUntilReady: true)
        }) { gate in
            let client = gate.client()
            var admitted: [String] = []
            for (index, ip) in (Self.spellings + Self.spellings).enumerated() {
                let answer = try Self.send(client, index, ip: ip)
                if answer.status == 200 { admitted.append(ip); continue }
                #expect(try Abuse.object(answer)["reason"] as? String == "too_many_requests", "\(ip): \(answer)")
            }
            #expect(admitted == Array(Self.spellings.prefix(3)), "one client made \(admitted.count) requests past a limit of 3")
            // `::1` is no IPv4 client 0.0.0.1: its own address, limited on its own.
            #expect(try Self.send(client, 90, ip: "::1").status == 200)
            #expect(try Self.send(client, 91, ip: "0.0.0.1").status == 200)
        }
    }
}
