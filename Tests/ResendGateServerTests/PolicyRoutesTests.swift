import Foundation
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The anti-abuse policies over HTTP, against a real Redis: each reason in a 429 or 403
/// body with its headers, Idempotency-Key replays, refunds, the per-IP race of the issue,
/// and the policy file and privacy of `resendgate serve`.
@Suite("Policies over HTTP", .ownThread)
struct PolicyRoutesTests {
    static let number = "+8613800138000"

    // MARK: - 429 max_sends and ip_limit

    @Test func maxSendsIsA429WithItsReasonAndHeaders() throws {
        let policy = Policy(ladder: [.seconds(10)], window: .seconds(60), maxSends: 2)
        try withPolicyServer(PolicySet(fallback: policy)) { server in
            let client = server.client()
            let first = try client.send(phone: Self.number)
            #expect(first.status == 200)
            let allowed = try object(first)
            #expect(allowed["sends_left"] as? Int == 1)
            #expect(allowed["next_retry_after"] as? Int == 10)
            #expect(allowed["retry_after_ms"] as? Int == 10_000)
            try server.redis.client().runOut(gateKey(.cooldown, Self.number))
            // The send that fills the window answers with the real wait: until the oldest
            // send leaves the 60 s window, not the 10 s step.
            let filling = try object(try client.send(phone: Self.number))
            #expect(filling["sends_left"] as? Int == 0)
            let oldest = try server.oldestScore(gateKey(.window, Self.number))
            let filledText = try #require(filling["server_time"] as? String)
            let filledAt = try #require(RFC3339.milliseconds(filledText))
            #expect((filling["retry_after_ms"] as? Int).map(Int64.init) == oldest + 60_000 - filledAt, "\(filling)")

            let response = try client.send(phone: Self.number)
            #expect(response.status == 429)
            let body = try object(response)
            #expect(body["allowed"] as? Bool == false)
            #expect(body["reason"] as? String == "max_sends")
            #expect(body["sends_left"] as? Int == 0)
            #expect(body["phone"] as? String == Self.number)
            let waitMs = try #require(body["retry_after_ms"] as? Int)
            let serverTimeText = try #require(body["server_time"] as? String)
            let serverTime = try #require(RFC3339.milliseconds(serverTimeText))
            // Until the oldest send leaves the window (give or take Redis's ms rounding of
            // the cooldown that was stretched to that moment).
            #expect(Int64(waitMs) >= oldest + 60_000 - serverTime && Int64(waitMs) <= oldest + 60_002 - serverTime)
            #expect(waitMs > 0 && waitMs <= 50_000)
            let seconds = Int(Decision.wholeSeconds(Int64(waitMs)))
            #expect(body["retry_after"] as? Int == seconds)
            // The token of the cooldown that runs until then.
            #expect(body["countdown_token"] as? String == filling["countdown_token"] as? String)
            #expect(response.header("Retry-After") == "\(seconds)")
            #expect(response.header("RateLimit-Policy") == #""max_sends";q=2"#)
            #expect(response.header("RateLimit") == #""max_sends";r=0;t=\#(seconds)"#)
            #expect(response.header("Content-Type") == jsonContentType)
            #expect(try server.redis.client().windowSends(gateKey(.window, Self.number)).count == 2)

            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="max_sends""#) == 1)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 2)
        }
    }

    @Test func ipLimitIsA429WithItsReasonAndHeaders() throws {
        let policy = Policy(ipMaxSends: 2, ipWindow: .seconds(60))
        try withPolicyServer(PolicySet(fallback: policy)) { server in
            let client = server.client()
            for index in 0..<2 {
                #expect(try client.send(#"{"phone": "\#(phone(index))", "client_ip": "2001:db8::\#(index + 1)"}"#).status == 200)
            }
            let response = try client.send(#"{"phone": "\#(phone(2))", "client_ip": "2001:db8:0:0:1::7"}"#)
            #expect(response.status == 429)
            let body = try object(response)
            #expect(body["reason"] as? String == "ip_limit")
            #expect(body["phone"] as? String == phone(2))
            #expect(body["sends_left"] is NSNull)
            let waitMs = try #require(body["retry_after_ms"] as? Int)
            #expect(waitMs > 0 && waitMs <= 60_000)
            let seconds = Int(Decision.wholeSeconds(Int64(waitMs)))
            #expect(response.header("Retry-After") == "\(seconds)")
            #expect(response.header("RateLimit-Policy") == #""ip_limit";q=2"#)
            #expect(response.header("RateLimit") == #""ip_limit";r=0;t=\#(seconds)"#)
            #expect(try client.send(#"{"phone": "\#(phone(2))", "client_ip": "2001:db8:0:1::7"}"#).status == 200)
            #expect(try client.send(#"{"phone": "\#(phone(3))", "client_ip": "2001:db8:0:1::/64"}"#).errorCode == "invalid_field")
            #expect(try client.send(#"{"phone": "\#(phone(3))", "client_ip": 17}"#).errorCode == "invalid_field")
        }
    }

    // MARK: - 403 region and number type

    @Test func regionAndNumberTypeAre403WithTheirCodesAndWriteNothing() throws {
        let policies = PolicySet(
            fallback: Policy(allowedRegions: ["CN", "GB"]),
            purposes: ["premium": Policy(allowedNumberTypes: [.premiumRate, .mobile])])
        try withPolicyServer(policies) { server in
            let client = server.client()
            let region = try client.send(phone: "+1 650 253 0000")
            #expect(region.status == 403)
            #expect(region.header("Content-Type") == jsonContentType)
            #expect(region.errorCode == "region_not_allowed")
            #expect(region.header("Retry-After") == nil)
            let premium = try client.send(phone: "+44 909 879 0000")
            #expect(premium.status == 403)
            #expect(premium.errorCode == "number_type_not_allowed")
            #expect(try premium.decode(ErrorBody.self).error.message.contains("premium_rate"))
            // A fixed line is not a mobile either.
            #expect(try client.send(phone: "+44 20 7031 3000").errorCode == "number_type_not_allowed")
            #expect(try server.redis.client().command("DBSIZE") == .integer(0))

            #expect(try client.send(phone: "+44 909 879 0000", purpose: "premium").status == 200)
            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="region_not_allowed""#) == 1)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="number_type_not_allowed""#) == 2)
        }
    }

    // MARK: - Idempotency-Key

    @Test func idempotencyKeyReplaysTheSameBytesAndConsumesNothing() throws {
        let policy = Policy(ladder: [.seconds(60), .seconds(120)], maxSends: 3)
        try withPolicyServer(PolicySet(fallback: policy)) { server in
            let client = server.client()
            let redis = try server.redis.client()
            let body = #"{"phone": "+86 138 0013 8000", "purpose": "login", "client_ip": "203.0.113.7"}"#
            func send(_ json: String, key: String) throws -> RawHTTPResponse {
                try client.send(json, headers: [("Content-Type", "application/json"), ("Idempotency-Key", key)])
            }
            let first = try send(body, key: "order-42")
            #expect(first.status == 200)
            #expect(first.header("Idempotent-Replayed") == nil)
            let sends = gateKey(.window, Self.number, purpose: "login")
            let members = try redis.windowSends(sends)
            let cooldownValue = try redis.command("GET", gateKey(.cooldown, Self.number, purpose: "login"))
            usleep(20_000)  // so that a fresh decision would carry another server_time

            let replay = try send(body, key: "order-42")
            #expect(replay.status == 200)
            #expect(replay.header("Idempotent-Replayed") == "true")
            #expect(replay.body == first.body, "\(replay.text)\n\(first.text)")
            #expect(try redis.windowSends(sends) == members)
            #expect(try redis.command("GET", gateKey(.cooldown, Self.number, purpose: "login")) == cooldownValue)

            let other = try send(#"{"phone": "+8613800138001", "purpose": "login", "client_ip": "203.0.113.7"}"#, key: "order-42")
            #expect(other.status == 422)
            #expect(other.errorCode == "idempotency_key_reused")
            #expect(other.header("Idempotent-Replayed") == nil)
            #expect(try redis.command("EXISTS", gateKey(.cooldown, "+8613800138001", purpose: "login")) == .integer(0))

            // A denied answer is stored and replayed byte for byte, with its headers.
            let denied = try send(body, key: "order-43")
            #expect(denied.status == 429)
            #expect(try object(denied)["reason"] as? String == "cooldown")
            usleep(20_000)
            let deniedReplay = try send(body, key: "order-43")
            #expect(deniedReplay.status == 429)
            #expect(deniedReplay.body == denied.body)
            #expect(deniedReplay.header("Idempotent-Replayed") == "true")
            for name in ["Retry-After", "RateLimit", "RateLimit-Policy"] {
                #expect(deniedReplay.header(name) == denied.header(name), "\(name)")
            }
            #expect(try redis.windowSends(sends).count == 1)

            #expect(try send(body, key: "no spaces allowed").errorCode == "invalid_field")
            // Replays are not counted as decisions again.
            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 1)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="cooldown""#) == 1)
        }
    }

    // MARK: - Refund

    @Test func deleteRefundsTheSendSoTheNextGetsTheSameLadderStep() throws {
        let policy = Policy(ladder: [.seconds(10), .seconds(50), .seconds(90)])
        try withPolicyServer(PolicySet(fallback: policy)) { server in
            let client = server.client()
            #expect(try object(try client.send(phone: Self.number))["retry_after_ms"] as? Int == 10_000)
            try server.redis.client().runOut(gateKey(.cooldown, Self.number))
            let second = try object(try client.send(phone: Self.number))
            #expect(second["retry_after_ms"] as? Int == 50_000)
            #expect(second["next_retry_after"] as? Int == 90)

            #expect(try client.delete("/v1/cooldowns/%2B8613800138000").status == 204)
            let idle = try client.get("/v1/cooldowns/%2B8613800138000").decode(CooldownBody.self)
            #expect(!idle.active)
            let again = try client.send(phone: "+86 138 0013 8000")
            #expect(again.status == 200)
            let body = try object(again)
            #expect(body["retry_after_ms"] as? Int == 50_000, "the 2nd step again, not the 3rd")
            #expect(body["next_retry_after"] as? Int == 90)
            #expect(try server.redis.client().windowSends(gateKey(.window, Self.number)).count == 2)
        }
    }

    // MARK: - The issue's race

    /// 200 parallel sends over 100 numbers (two each, interleaved) from one IP with an IP
    /// cap of 50: exactly 50 are allowed, no number twice, and every refusal says why.
    @Test func twoHundredParallelSendsFromOneIPWithACapOf50AllowExactly50() throws {
        let policy = Policy(ladder: [.seconds(60)], ipMaxSends: 50, ipWindow: .seconds(3600))
        try withPolicyServer(PolicySet(fallback: policy), workers: 4) { server in
            let client = server.client()
            let count = 200
            let began = ContinuousClock.now
            let connections = try (0..<count).map { _ in try RawHTTPConnection(port: server.port, timeout: .seconds(20)) }
            for (index, connection) in connections.enumerated() {
                let body = Array(#"{"phone": "\#(phone(index % 100))", "client_ip": "198.51.100.23"}"#.utf8)
                try connection.write(client.requestBytes(
                    "POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: body))
            }
            var statuses: [Int: Int] = [:]
            var allowedPerNumber: [String: Int] = [:]
            var reasons: [String: Int] = [:]
            var fillingTheCap = 0
            for connection in connections {
                let response = try connection.readResponse()
                statuses[response.status, default: 0] += 1
                let body = try object(response)
                let phone = try #require(body["phone"] as? String)
                if response.status == 200 {
                    allowedPerNumber[phone, default: 0] += 1
                    // The send that fills the IP's cap says how long the IP must wait.
                    let wait = try #require(body["retry_after_ms"] as? Int)
                    // An hour less the real time since the first send (seconds on a loaded machine).
                    let passed = Int((ContinuousClock.now - began).wholeMilliseconds)
                    if wait > 3_599_000 - passed && wait <= 3_600_000 { fillingTheCap += 1 } else { #expect(wait == 60_000) }
                } else {
                    let reason = try #require(body["reason"] as? String)
                    reasons[reason, default: 0] += 1
                    #expect(reason == "cooldown" || reason == "ip_limit", "\(response)")
                    #expect(response.header("Retry-After") == "\(body["retry_after"] as? Int ?? -1)")
                }
            }
            #expect(statuses == [200: 50, 429: 150])
            #expect(fillingTheCap == 1)
            #expect(allowedPerNumber.count == 50)
            #expect(allowedPerNumber.values.allSatisfy { $0 == 1 })
            #expect(reasons.values.reduce(0, +) == 150)
            // Every send of a number that was allowed once and then refused met either its
            // cooldown or the cap; at least the 100 sends past the cap met the cap.
            #expect((reasons["ip_limit"] ?? 0) >= 100, "\(reasons)")
            let redis = try server.redis.client()
            #expect(try redis.command("ZCARD", ipSendsKey("198.51.100.23")) == .integer(50))
            #expect(try redis.keys("rg:{default:*}:cooldown").count == 50)
        }
    }

    // MARK: - Privacy

    @Test func metricsAndKeysHoldNoPhoneNumberWithAKeySecret() throws {
        let policy = Policy(ladder: [.seconds(60), .seconds(120)], maxSends: 3, ipMaxSends: 5)
        try withPolicyServer(PolicySet(fallback: policy), keySecret: "0123456789abcdef-secret") { server in
            let client = server.client()
            #expect(try client.send(#"{"phone": "+86 138 0013 8000", "client_ip": "203.0.113.7"}"#).status == 200)
            #expect(try client.send(#"{"phone": "008613800138000", "client_ip": "203.0.113.7"}"#).status == 429)
            #expect(try client.get("/v1/cooldowns/13800138000").decode(CooldownBody.self).active)
            let metrics = try client.get("/metrics").text
            #expect(!metrics.contains("13800138000"))
            let keys = try server.redis.client().keys("*")
            #expect(!keys.isEmpty)
            #expect(!keys.joined(separator: " ").contains("13800138000"), "\(keys)")
            #expect(try client.delete("/v1/cooldowns/%2B8613800138000").status == 204)
            #expect(try client.send(phone: Self.number).status == 200)
        }
    }

    /// `resendgate serve` at log level info, after sends, peeks and releases of a number:
    /// its stderr names no phone number.
    @Test func serveInfoLogNamesNoPhoneNumber() throws {
        let gate = try TestGate(serve: [
            "--workers", "1", "--log-level", "info", "--region", "CN", "--allow-regions", "CN", "--key-secret", "0123456789abcdef-secret",
        ])
        defer { gate.stop(grace: .seconds(2)) }
        let server = try #require(gate.process)
        let client = gate.client()
        #expect(try client.send(phone: "+86 138 0013 8000", purpose: "login").status == 200)
        #expect(try client.send(phone: "13800138000", purpose: "login").status == 429)
        #expect(try client.send(phone: "+44 7400 123456").status == 403)
        #expect(try client.send(phone: "+86 999").status == 400)
        #expect(try client.get("/v1/cooldowns/%2B8613800138000?purpose=login").status == 200)
        #expect(try client.delete("/v1/cooldowns/13800138000?purpose=login").status == 204)
        let result = server.stop(grace: .seconds(5))
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("status=429"), "the access log was written: \(result.stderr)")
        for digits in ["13800138000", "7400123456", "7400 123456", "138 0013", "%2B86", "+86"] {
            #expect(!result.stderr.contains(digits), "\(digits) in \(result.stderr)")
            #expect(!result.stdout.contains(digits), "\(digits) in \(result.stdout)")
        }
    }

    // MARK: - resendgate serve --policy

    @Test func servePolicyFileGivesPurposesTheirOwnLadders() throws {
        let file = try PolicyFile(#"""
            {"default": {"cooldown": "2s"},
             "purposes": {"login": {"cooldown": "1s,2s", "window": "60s"},
                          "signup": {"cooldown": "1500ms", "max_sends": 1, "window": "60s"}}}
            """#)
        defer { file.remove() }
        let gate = try TestGate(serve: ["--workers", "1", "--log-level", "off", "--policy", file.path, "--purposes", "reset"])
        defer { gate.stop(grace: .seconds(2)) }
        let client = gate.client()
        let login = try object(try client.send(phone: Self.number, purpose: "login"))
        let signup = try object(try client.send(phone: Self.number, purpose: "signup"))
        // `--purposes reset`: configured, under the file's default policy.
        let reset = try object(try client.send(phone: Self.number, purpose: "reset"))
        #expect(login["retry_after_ms"] as? Int == 1_000)
        #expect(login["next_retry_after"] as? Int == 2)
        #expect(login["sends_left"] is NSNull)
        // Its one send fills the window: the real wait is the 60 s window, not the 1.5 s step.
        #expect(signup["retry_after_ms"] as? Int == 60_000)
        #expect(signup["sends_left"] as? Int == 0)
        #expect(reset["retry_after_ms"] as? Int == 2_000)
    }

    @Test(arguments: [
        (#"{"purposes": {"login": {"max_sends": 4, "cooldown": "1s,2s", "window": "5s"}}}"#, "purposes.login.max-sends"),
        (#"{"purposes": {"login": {"cooldwn": "60s"}}}"#, "purposes.login.cooldwn"),
        (#"{"purposes": {"login": {"window": "0s"}}}"#, "purposes.login.window"),
        (#"{"purposes": {"login": {"ip_window": "-5s"}}}"#, "purposes.login.ip_window"),
        (#"{"purposes": {"signup": {"allow_regions": ["CN", "XX"]}}}"#, "purposes.signup.allow-regions"),
        (#"{"purposes": {"signup": {"allow_number_types": ["cellphone"]}}}"#, "purposes.signup.allow_number_types"),
        (#"{"default": {"cooldown": "60s"}, "extra": 1}"#, "policy"),
    ])
    func serveRefusesABadPolicyFileAtStart(json: String, field: String) throws {
        let result = try PolicyFile.serve(json)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains(field), "\(result.stderr)")
        #expect(result.stdout == "")
        #expect(!result.stderr.contains("listening"))
    }

    // MARK: - Helpers

    private func phone(_ index: Int) -> String {
        "+86138001380" + (index < 10 ? "0" : "") + String(index)
    }

    private func object(_ response: RawHTTPResponse) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(response.body))
        return try #require(value as? [String: Any], "not a JSON object: \(response)")
    }

    private func pollUntil(timeout: Duration = .seconds(5), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            if (try? condition()) == true { return }
            guard ContinuousClock.now < deadline else { throw RawHTTPError.malformed("condition not met within \(timeout)") }
            usleep(20_000)
        }
    }
}

/// A real Redis and an in-process server with a policy set (and key secret) of the test's choosing.
private final class PolicyServer: Sendable {
    let gate: TestGate
    var redis: RedisServer { gate.redis }
    var port: Int { gate.port }

    init(policies: PolicySet, keySecret: String?, workers: Int) throws {
        gate = try RunningGate(
            workers: workers, redisTimeout: .seconds(5), policies: policies, keySecret: keySecret, waitUntilReady: true)
    }

    func client() -> HTTPTestClient { HTTPTestClient(port: port) }

    /// The time (Redis ms) of the oldest send a window holds.
    func oldestScore(_ key: String) throws -> Int64 {
        guard let oldest = try redis.client().windowSends(key).first else {
            throw RawHTTPError.malformed("no send in \(key)")
        }
        return oldest.time
    }

    func stop() {
        gate.stop()
    }
}

private func withPolicyServer(
    _ policies: PolicySet, keySecret: String? = nil, workers: Int = 2, _ body: (PolicyServer) throws -> Void
) throws {
    let server = try PolicyServer(policies: RunningGate.withTestPurposes(policies), keySecret: keySecret, workers: workers)
    defer { server.stop() }
    try body(server)
}

extension RedisTestClient {
    fileprivate func keys(_ pattern: String) throws -> [String] {
        (try command("KEYS", pattern).array ?? []).compactMap(\.string).sorted()
    }
}
