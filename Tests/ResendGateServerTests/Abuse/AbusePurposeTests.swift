import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Security review of issue 12: every purpose has per-number limits of its own, and any
/// `[a-z0-9_-]{1,32}` was a purpose, so one number posted under purposes a, b, c, d, e, f
/// (`--cooldown 2s,4s --max-sends 3`) got six 200s in a second. Purposes are now an
/// allow-list (`default`, `--purposes`, the policy file's): any other is 400
/// `invalid_purpose` and touches nothing in Redis.
@Suite("Abuse: made-up purposes get no limits of their own", .ownThread)
struct AbusePurposeTests {
    static let policy = Policy(ladder: [.seconds(60), .seconds(120)], window: .seconds(3600), maxSends: 3, ipMaxSends: 100)
    static let configured = ["default", "a", "b", "c"]
    static let madeUp = ["d", "e", "f", "login", "x-1", "reset-password", "zz_9"]
    static let clientIP = "203.0.113.9"

    /// `default`, `a` and `b` (`plainPurposes`, as `--purposes a,b`) and `c` (a policy
    /// file's) are configured; nothing else.
    static func policies() throws -> PolicySet {
        try PolicySet.parse(
            json: Data(#"{"purposes": {"c": {"cooldown": "60s,120s", "max_sends": 3}}}"#.utf8), base: policy, plainPurposes: ["a", "b"])
    }

    static func post(_ purpose: String, key: String) -> (method: String, target: String, headers: [(String, String)], body: String?) {
        Abuse.post(#"{"phone": "\#(Abuse.number)", "purpose": "\#(purpose)", "client_ip": "\#(clientIP)"}"#,
                   headers: [("Idempotency-Key", key)])
    }

    @Test func oneNumberUnderManyPurposesGetsOneSendPerConfiguredPurpose() throws {
        try withRunningGate(policies: try Self.policies(), testPurposes: false) { gate in
            // Three rounds of every purpose, pipelined on one connection within the cooldown.
            var requests: [(method: String, target: String, headers: [(String, String)], body: String?)] = []
            var purposes: [String] = []
            for round in 0..<3 {
                for purpose in Self.configured + Self.madeUp {
                    requests.append(Self.post(purpose, key: "\(purpose)-\(round)"))
                    purposes.append(purpose)
                }
            }
            let answers = try Abuse.pipeline(gate, apiKey: nil, requests)
            var allowed: [String: Int] = [:]
            for (purpose, answer) in zip(purposes, answers) {
                if Self.configured.contains(purpose) {
                    #expect(answer.status == 200 || answer.status == 429, "\(purpose): \(answer)")
                    if answer.status == 200 { allowed[purpose, default: 0] += 1 }
                } else {
                    #expect(answer.status == 400, "\(purpose): \(answer)")
                    let error = try Abuse.error(answer)
                    #expect(error["code"] as? String == "invalid_purpose")
                    #expect((error["message"] as? String)?.contains("not a configured purpose") == true, "\(error)")
                }
            }
            // The cooldown of each configured purpose holds: one send each, whatever names were tried.
            #expect(allowed == ["default": 1, "a": 1, "b": 1, "c": 1])

            // Nothing of a made-up purpose reached Redis: no number keys, no IP share, no record.
            let redis = try gate.redis.client()
            let numberKeys = (try redis.command("KEYS", "rg:{*").array ?? []).compactMap(\.string)
            let keyPurposes = Set(numberKeys.compactMap { $0.split(separator: "{").last?.split(separator: ":").first.map(String.init) })
            #expect(keyPurposes == Set(Self.configured), "\(numberKeys)")
            #expect(try Abuse.count("rg:ip:{\(Self.clientIP)}:sends", in: gate.redis) == 4)
            for purpose in Self.madeUp {
                for round in 0..<3 {
                    let record = GateKeys(prefix: "rg").idempotencyRecord(idempotencyKey: "\(purpose)-\(round)")
                    #expect(try redis.command("EXISTS", record).integer == 0, "\(purpose)-\(round)")
                }
            }
            let before = try redis.command("DBSIZE").integer

            // Peeks and refunds under a made-up purpose are refused too, and change nothing.
            let client = gate.client()
            for purpose in Self.madeUp {
                for answer in [try client.get("/v1/cooldowns/\(Abuse.encoded)?purpose=\(purpose)"),
                               try client.delete("/v1/cooldowns/\(Abuse.encoded)?purpose=\(purpose)")] {
                    #expect(answer.status == 400, "\(purpose): \(answer)")
                    #expect(try Abuse.error(answer)["code"] as? String == "invalid_purpose")
                }
            }
            #expect(try client.get("/v1/cooldowns/\(Abuse.encoded)?purpose=c").status == 200)
            #expect(try redis.command("DBSIZE").integer == before)
        }
    }

    /// The built binary: `--purposes` configures exactly its names (here it replaces the
    /// fixtures' list), and the policy file's purposes are configured as well.
    @Test func servePurposesFlagIsTheAllowList() throws {
        let file = try PolicyFile(#"{"purposes": {"c": {"cooldown": "60s"}}}"#)
        defer { file.remove() }
        let gate = try AbuseServeProcess(["--cooldown", "60s,120s", "--max-sends", "3", "--purposes", "a", "--policy", file.path])
        defer { gate.stop() }
        let client = gate.client()
        var statuses: [String: Int] = [:]
        for purpose in ["default", "a", "c", "b", "login", "d", "e", "f"] {
            statuses[purpose] = try client.send(phone: Abuse.number, purpose: purpose).status
        }
        #expect(statuses == ["default": 200, "a": 200, "c": 200, "b": 400, "login": 400, "d": 400, "e": 400, "f": 400])
        let keys = (try gate.redis.client().command("KEYS", "rg:{*").array ?? []).compactMap(\.string)
        #expect(keys.allSatisfy { ["rg:{default:", "rg:{a:", "rg:{c:"].contains(where: $0.hasPrefix) }, "\(keys)")
    }
}
