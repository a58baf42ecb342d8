import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// `POST /v1/verifications` and the wrong-code lockout over HTTP (issue 15, items 1-2):
/// attempts left, 429 `locked` with its headers on the verification and on sends, scopes,
/// and what a guesser could try against the route.
@Suite("Verifications over HTTP", .ownThread)
struct VerificationsRouteTests {
    static let number = "+8613800138000"
    static let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 3, lockout: .seconds(600), lockoutScope: .number)

    static func verify(_ client: HTTPTestClient, _ outcome: String, phone: String = number, extra: String = "") throws -> RawHTTPResponse {
        try client.request("POST", "/v1/verifications", headers: [("Content-Type", "application/json")],
                           body: #"{"phone": "\#(phone)", "outcome": "\#(outcome)"\#(extra)}"#)
    }

    static func object(_ response: RawHTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response)")
    }

    @Test func wrongCodesCountDownToA429LockThatSendsMeetToo() throws {
        try withRunningGate(policies: PolicySet(fallback: Self.policy)) { gate in
            let client = gate.client()
            #expect(try client.send(phone: Self.number).status == 200)
            let first = try Self.verify(client, "failed")
            #expect(first.status == 200)
            #expect(try Self.object(first)["attempts_left"] as? Int == 2)
            #expect(try Self.object(Self.verify(client, "failed"))["attempts_left"] as? Int == 1)
            let locked = try Self.verify(client, "failed")
            #expect(locked.status == 429 && locked.errorCode == "locked", "\(locked)")
            let seconds = try #require(locked.header("Retry-After").flatMap(Int.init))
            #expect(seconds > 590 && seconds <= 600)
            #expect(locked.header("RateLimit-Policy") == #""locked";q=3"#)
            // The right code does not unlock, nor does a refund.
            #expect(try Self.verify(client, "verified").errorCode == "locked")
            let refund = try client.delete("/v1/cooldowns/%2B8613800138000")
            #expect(refund.status == 429 && refund.errorCode == "locked" && refund.header("Retry-After") != nil)
            // A send is a 429 decision with reason locked.
            let send = try client.send(phone: "+86 138 0013 8000")
            #expect(send.status == 429)
            let body = try Self.object(send)
            #expect(body["reason"] as? String == "locked" && body["countdown_token"] == nil)
            #expect(send.header("RateLimit-Policy") == #""locked";q=3"#)
            let metrics = try PrometheusSamples(try client.get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="locked""#) == 1)
        }
    }

    @Test func theRightCodeClearsAndAnswersWithNoAttemptsCount() throws {
        try withRunningGate(policies: PolicySet(fallback: Self.policy)) { gate in
            let client = gate.client()
            #expect(try client.send(phone: Self.number).status == 200)
            #expect(try client.send(phone: "+447400123456").status == 200)
            #expect(try Self.object(Self.verify(client, "failed"))["attempts_left"] as? Int == 2)
            let verified = try Self.verify(client, "verified", phone: "138 0013 8000")
            #expect(verified.status == 200)
            let body = try Self.object(verified)
            #expect(body["outcome"] as? String == "verified" && body["phone"] as? String == Self.number)
            #expect(body["attempts_left"] is NSNull)
            #expect(try Self.object(Self.verify(client, "failed"))["attempts_left"] as? Int == 2)
            // A national number in a picked region, and another purpose.
            #expect(try Self.object(Self.verify(client, "failed", phone: "07400123456", extra: #", "region": "GB""#))["phone"] as? String
                == "+447400123456")
            #expect(try Self.verify(client, "failed", extra: #", "purpose": "made-up""#).errorCode == "invalid_purpose")
        }
    }

    @Test(arguments: [
        (#"{"phone": "+8613800138000"}"#, "missing_field"),
        (#"{"phone": "+8613800138000", "outcome": "maybe"}"#, "invalid_field"),
        (#"{"phone": "+8613800138000", "outcome": true}"#, "invalid_field"),
        (#"{"outcome": "failed"}"#, "missing_field"),
        (#"{"phone": "+8613800138000", "outcome": "failed", "outcome": "verified"}"#, "invalid_json"),
        (#"{"phone": "not a number", "outcome": "failed"}"#, "invalid_phone"),
        (#"[1]"#, "invalid_json"),
    ])
    func malformedBodiesAreRefusedAndCountNothing(body: String, code: String) throws {
        try withRunningGate(policies: PolicySet(fallback: Self.policy)) { gate in
            let client = gate.client()
            let answer = try client.request("POST", "/v1/verifications", headers: [("Content-Type", "application/json")], body: body)
            #expect(answer.errorCode == code, "\(body): \(answer)")
            #expect(try gate.redis.client().command("DBSIZE") == .integer(0))
            #expect(try client.request("GET", "/v1/verifications").status == 405)
            #expect(try client.request("POST", "/v1/verifications", body: #"{"phone": "+8613800138000", "outcome": "failed"}"#).status == 415)
        }
    }

    /// The route needs the `verify` scope: a bare key has it, a send-only key does not.
    @Test func theRouteNeedsTheVerifyScope() throws {
        let bare = "bare-key-0123456789abcdef", sendOnly = "send-key-0123456789abcdef"
        try withRunningGate(apiKeys: [bare, "\(sendOnly) send"], policies: PolicySet(fallback: Self.policy)) { gate in
            #expect(try gate.client(apiKey: bare).send(phone: Self.number).status == 200)
            let withBare = try Self.verify(gate.client(apiKey: bare), "failed")
            #expect(withBare.status == 200, "\(withBare)")
            let withSendOnly = try Self.verify(gate.client(apiKey: sendOnly), "failed")
            #expect(withSendOnly.errorCode == "forbidden", "\(withSendOnly)")
            var anonymous = gate.client()
            anonymous.apiKey = nil
            let withNone = try Self.verify(anonymous, "failed")
            #expect(withNone.status == 401, "\(withNone)")
        }
    }
}

/// Issue 23, finding 3, over HTTP: the default lock holds the code (409 `code_locked`),
/// never the number's sends, and a `failed` with no code sent is 409 `no_code_sent`.
@Suite("Verifications over HTTP: a lock nobody can aim", .ownThread)
struct CodeLockRouteTests {
    @Test func failuresWithoutACodeAre409AndACodeLockLeavesSendsAlone() throws {
        let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 2)
        try withRunningGate(policies: PolicySet(fallback: policy)) { gate in
            let client = gate.client()
            let none = try VerificationsRouteTests.verify(client, "failed")
            #expect(none.status == 409 && none.errorCode == "no_code_sent", "\(none)")
            #expect(try gate.redis.client().command("DBSIZE") == .integer(0))

            #expect(try client.send(phone: VerificationsRouteTests.number).status == 200)
            #expect(try VerificationsRouteTests.object(VerificationsRouteTests.verify(client, "failed"))["attempts_left"] as? Int == 1)
            let locked = try VerificationsRouteTests.verify(client, "failed")
            #expect(locked.status == 409 && locked.errorCode == "code_locked", "\(locked)")
            let error = try #require(try VerificationsRouteTests.object(locked)["error"] as? [String: Any])
            #expect((error["retry_after"] as? Int).map { $0 > 50 && $0 <= 60 } == true, "\(error)")
            #expect(try VerificationsRouteTests.verify(client, "verified").errorCode == "code_locked")
            // The number's own cooldown refuses a send, not a lock.
            let send = try client.send(phone: VerificationsRouteTests.number)
            #expect(try VerificationsRouteTests.object(send)["reason"] as? String == "cooldown")
        }
    }
}
