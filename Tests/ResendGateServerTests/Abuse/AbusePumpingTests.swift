import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 3 over HTTP: a pumping script pipelines code requests for one prefix
/// and never verifies, while normal users on other prefixes verify four codes in five.
/// The prefix is refused (429 `suspected_pumping`, with its headers) from its min volume
/// on, the others never; `GET /v1/prefixes?state=blocked` lists exactly it (key-scoped,
/// `read`); `/metrics` has sends and verifications by calling code.
@Suite("Abuse: an SMS-pumping attack over HTTP", .ownThread)
struct AbusePumpingTests {
    static let policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 20, window: .seconds(3600), minConversion: 0.3))
    static let readKey = "abuse-read-key-0123456789abc read"
    static let sendKey = "abuse-send-key-0123456789abc send,verify"

    static func attacked(_ index: Int) -> String { "+447911\(String(format: "%06d", index))" }

    /// Issue 23, finding 2: waves of requests for one number in its cooldown (each a 429
    /// that costs no SMS), from 40 connections at once, while honest new numbers of the same
    /// prefix ask for codes. The prefix converts at 30 %: no honest number is refused.
    @Test func aFloodOfRefusedRequestsCannotCloseAnHonestPrefix() throws {
        let policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 10, window: .seconds(3600), minConversion: 0.1))
        try withRunningGate(apiKeys: [Self.sendKey], policies: PolicySet(fallback: policy)) { gate throws in
            let sender = "abuse-send-key-0123456789abc"
            let client = gate.client(apiKey: sender)
            func honest(_ index: Int) -> String { "+447912\(String(format: "%06d", index))" }
            for index in 0..<10 { #expect(try client.send(phone: honest(index)).status == 200) }
            for index in 0..<3 { #expect(try Self.verify(client, honest(index)).status == 200) }
            let floodBytes = client.requestBytes(
                "POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: Array(#"{"phone": "\#(honest(9))"}"#.utf8),
                keepAlive: true)
            for wave in 0..<8 {
                // 400 connections each write one request before any answer is read, the
                // honest one among them: all are in flight at once.
                var connections: [RawHTTPConnection] = []
                defer { connections.forEach { $0.close() } }
                for index in 0..<401 {
                    let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(20))
                    connections.append(connection)
                    if index == 200 {
                        try connection.write(client.requestBytes(
                            "POST", "/v1/sends", headers: [("Content-Type", "application/json")],
                            body: Array(#"{"phone": "\#(honest(100 + wave))"}"#.utf8), keepAlive: true))
                    } else {
                        try connection.write(floodBytes)
                    }
                }
                let answers = try connections.map { try $0.readResponse() }
                #expect(answers[200].status == 200, "honest number \(wave): \(answers[200]) \(String(decoding: answers[200].body, as: UTF8.self))")
                let flood = answers.enumerated().filter { $0.offset != 200 }.map(\.element)
                #expect(flood.allSatisfy { $0.status == 429 && (try? Abuse.object($0)["reason"] as? String) == "cooldown" }, "wave \(wave)")
            }
        }
    }

    @Test func thePipelinedAttackIsRefusedFromItsMinVolumeAndListed() throws {
        try withRunningGate(apiKeys: [Self.readKey, Self.sendKey], policies: PolicySet(fallback: Self.policy)) { gate in
            let sender = "abuse-send-key-0123456789abc"
            let client = gate.client(apiKey: sender)
            // A user of the attacked prefix who verified yesterday.
            #expect(try client.send(phone: "+447911123456").status == 200)
            #expect(try Self.verify(client, "+447911123456").status == 200)
            try gate.redis.client().runOut(gateKey(.cooldown, "+447911123456"))

            // Normal users: 25 each on three prefixes of two calling codes, 4 in 5 verified.
            var verified = ["44": 1, "86": 0]
            var sent = ["44": 1, "86": 0]
            for index in 0..<25 {
                for (code, phone) in [("44", "+447912\(String(format: "%06d", index))"), ("44", "+447400\(String(format: "%06d", index))"),
                                      ("86", "+861390\(String(format: "%07d", index))")] {
                    let answer = try client.send(phone: phone)
                    #expect(answer.status == 200, "\(phone): \(answer)")
                    sent[code]! += 1
                    if index % 5 != 4 {
                        #expect(try Self.verify(client, phone).status == 200)
                        verified[code]! += 1
                    }
                }
            }

            // The script: 60 requests pipelined on one connection, never verified.
            let requests = (0..<60).map { Abuse.post(#"{"phone": "\#(Self.attacked($0))"}"#) }
            let answers = try Abuse.pipeline(gate, apiKey: sender, requests)
            // The verified user's send counts toward the volume: 19 more reach it.
            #expect(answers.prefix(19).allSatisfy { $0.status == 200 }, "\(answers.map(\.status))")
            sent["44"]! += 19
            for refused in answers.dropFirst(19) {
                // The wait lasts until the oldest counted bucket (the verified user's send,
                // moved a cooldown back by runOut) is an hour old: a bucket is 6 min, so
                // 3 540 s at most and 3 180 s at least (in a bucket's last seconds), never
                // more than the window.
                let body = try Abuse.expectLimited(refused, "suspected_pumping", waits: 3_171...3_600, policy: #""suspected_pumping";q=20"#)
                #expect(body["countdown_token"] == nil)
            }
            // The verified user still gets a code; anyone else on the prefix does not.
            #expect(try client.send(phone: "+447911123456").status == 200)
            sent["44"]! += 1
            #expect(try client.send(phone: Self.attacked(900)).status == 429)

            // The listing: exactly the attacked prefix, with its figures; `read` scope only.
            let reader = gate.client(apiKey: "abuse-read-key-0123456789abc")
            let listing = try reader.get("/v1/prefixes?state=blocked")
            #expect(listing.status == 200, "\(listing)")
            let prefixes = try #require(try Abuse.object(listing)["prefixes"] as? [[String: Any]])
            #expect(prefixes.count == 1, "\(prefixes)")
            let entry = try #require(prefixes.first)
            #expect(entry["prefix"] as? String == "+447911" && entry["calling_code"] as? Int == 44 && entry["purpose"] as? String == "default")
            #expect(entry["blocked"] as? Bool == true && entry["sends"] as? Int == 21 && entry["verifications"] as? Int == 1)
            #expect(entry["conversion"] as? Double == 0.0476, "\(entry)")
            #expect(entry["since"] is String && entry["free_at"] is String && (entry["retry_after"] as? Int).map { $0 > 3_200 } == true)
            #expect(try reader.get("/v1/prefixes").status == 200)
            #expect(try client.get("/v1/prefixes?state=blocked").errorCode == "forbidden")
            #expect(try gate.client().get("/v1/prefixes?state=blocked").status == 401)
            #expect(try reader.get("/v1/prefixes?state=active").errorCode == "invalid_field")
            #expect(try reader.request("POST", "/v1/prefixes", body: "{}").status == 405)

            // Metrics: sends and verifications by calling code (conversion is their ratio).
            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="suspected_pumping""#) == 42)
            for code in ["44", "86"] {
                #expect(metrics.value("resendgate_sends_by_calling_code_total", #"calling_code="\#(code)""#) == Double(sent[code]!), "\(code)")
                #expect(metrics.value("resendgate_verifications_by_calling_code_total", #"calling_code="\#(code)""#) == Double(verified[code]!), "\(code)")
            }
            // 86 converts at 80 %; 44 is dragged down by the attack's 19 sends.
            #expect(verified["86"]! * 100 / sent["86"]! == 80)
            #expect(metrics.value("resendgate_sends_by_calling_code_total", #"calling_code="1""#) == nil)

            // An hour later the prefix is free and no longer listed.
            try gate.redis.client().advanceTime(byMilliseconds: 3_600_000)
            #expect(try client.send(phone: Self.attacked(901)).status == 200)
            let after = try Abuse.object(try reader.get("/v1/prefixes?state=blocked"))
            #expect((after["prefixes"] as? [Any])?.isEmpty == true)
        }
    }

    static func verify(_ client: HTTPTestClient, _ phone: String) throws -> RawHTTPResponse {
        try client.request("POST", "/v1/verifications", headers: [("Content-Type", "application/json")],
                           body: #"{"phone": "\#(phone)", "outcome": "verified"}"#)
    }
}
