import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 23, finding 5: with `--key-secret`, Redis holds no personal data in clear. Client
/// addresses (and IPv6 /64s) were key names and sat in idempotency records, and the IP
/// set's members were the nonces of the number's keys, linking an address to a number.
@Suite("Gate: no personal data in Redis under a key secret")
struct GatePrivacyTests {
    static let secret = "a-secret-of-32-characters-000000"
    static let policy = Policy(
        ladder: [.seconds(60), .seconds(120)], maxSends: 3, ipMaxSends: 10,
        pumping: PumpingGuard(minSends: 50, window: .seconds(3600), minConversion: 0.1))

    @Test func addressesAreHashedAndTheIPSetCannotBeJoinedToANumber() async throws {
        try await withRedis { redis in
            let configuration = try GateConfiguration(
                redis: try RedisConfiguration.patient(redis.url), policies: PolicySet(fallback: Self.policy, plainPurposes: TestPurposes.names),
                defaultRegion: "CN", keySecret: Self.secret)
            let gate = Gate(configuration: configuration)
            let client = try redis.client()
            let addresses = ["203.0.113.7", "2001:db8:1:2::5"]
            for (index, address) in addresses.enumerated() {
                let phone = "+861380013800\(index)"
                #expect(try await gate.reserve(phone: phone, clientIP: address, idempotencyKey: "k\(index)").allowed)
                _ = try await gate.verify(phone: phone, outcome: .verified)
            }
            // The same address counts the same set under its hash: the second send from the
            // IPv6 /64 (another host in it) lands in the first one's set.
            #expect(try await gate.reserve(phone: "+8613800138009", clientIP: "2001:db8:1:2::99").allowed)

            let keys = try client.keys("*")
            var ipMembers: [String] = []
            var elsewhere = ""
            for key in keys {
                let type = try client.command("TYPE", key).string
                if key.hasPrefix("rg:ip:") {
                    #expect(type == "zset")
                    let members = try client.command("ZRANGE", key, "0", "-1")
                    guard case .array(let items) = members else { Issue.record("\(members)"); continue }
                    ipMembers += items.compactMap(\.string)
                    continue
                }
                elsewhere += key + "\n"
                switch type {
                case "string": elsewhere += (try client.command("GET", key).string ?? "") + "\n"
                case "hash": elsewhere += "\(try client.command("HGETALL", key))\n"
                case "zset": elsewhere += "\(try client.command("ZRANGE", key, "0", "-1"))\n"
                default: Issue.record("\(key) is a \(String(describing: type))")
                }
            }
            let ipKeys = keys.filter { $0.hasPrefix("rg:ip:") }
            #expect(ipKeys.count == 2, "one set per address (the /64 once): \(ipKeys)")
            #expect(ipKeys.allSatisfy { $0.count == "rg:ip:{}:sends".count + 64 }, "\(ipKeys)")
            #expect(ipMembers.count == 3)
            let everything = keys.joined(separator: "\n") + "\n" + elsewhere
            // Destination prefixes stay readable (`rg:pump:{default:+861380}`), never a whole number.
            for clear in ["203.0.113", "2001:db8", "13800138"] {
                #expect(!everything.contains(clear), "\(clear) in Redis:\n\(everything)")
            }
            for member in ipMembers {
                #expect(!elsewhere.contains(member), "the IP set's member \(member) is also in a number's keys")
            }
        }
    }
}
