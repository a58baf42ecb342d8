import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// Issue 35 over HTTP, against `resendgate serve --issue-codes` as an operator runs it: the
/// code reaches a back end only (never a page, never a key without `send`), never logs,
/// `/metrics`, the status, the countdown token or its stream; `POST /v1/checks` answers
/// each outcome with its status; `POST /v1/verifications` is refused for such a purpose.
@Suite("Issued codes over HTTP", .ownThread)
struct ChecksRouteTests {
    static let number = "+8613800138000"
    static let flags = [
        "--workers", "2", "--log-level", "info", "--region", "CN", "--issue-codes", "--max-failed-checks", "3",
        "--code-secret", "the tests' own code secret",
    ]

    static func check(_ client: HTTPTestClient, _ code: String, phone: String = number, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try client.request("POST", "/v1/checks", headers: [("Content-Type", "application/json")] + headers,
                           body: #"{"phone": "\#(phone)", "code": "\#(code)"}"#)
    }

    static func object(_ response: RawHTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response)")
    }

    /// A code of the same length that is not `code`.
    static func wrong(_ code: String) -> String {
        String(code.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) })
    }

    /// The whole flow as a back end runs it: send, the code from the answer, right once,
    /// then wrong until locked; and nothing that is not the back end's answer shows the code.
    @Test func aBackEndSendsChecksOnceAndNothingElseSeesTheCode() throws {
        let gate = try TestGate(serve: Self.flags)
        defer { gate.stop(grace: .seconds(2)) }
        let server = try #require(gate.process)
        let client = gate.client()
        let sent = try client.send(phone: Self.number)
        #expect(sent.status == 200 && sent.header("Cache-Control") == "no-store", "\(sent)")
        let body = try Self.object(sent)
        let code = try #require(body["code"] as? String)
        #expect(code.count == 6 && body["code_resent"] as? Bool == false)
        #expect((body["code_expires_in_ms"] as? Int).map { $0 > 590_000 && $0 <= 600_000 } == true)
        let codeToken = try #require(body["code_countdown_token"] as? String)
        #expect(codeToken != body["countdown_token"] as? String)

        // The code's countdown: its lifetime, and nothing else, over the token and its stream.
        let reading = try client.get("/v1/countdowns/\(codeToken)")
        #expect(reading.status == 200 && !reading.text.contains(code), "\(reading)")
        #expect((try Self.object(reading)["retry_after"] as? Int).map { $0 > 590 } == true)
        let stream = try client.openStream("/v1/countdowns/\(codeToken)/events")
        let tick = try #require(try stream.next())
        #expect(tick.event == "tick" && !tick.data.contains(code))
        stream.connection.close()
        for path in ["/v1/cooldowns/%2B8613800138000", "/metrics", "/v1/countdowns/\(try #require(body["countdown_token"] as? String))"] {
            #expect(!(try client.get(path).text.contains(code)), "\(path)")
        }

        let right = try Self.check(client, code)
        #expect(right.status == 200 && right.header("Cache-Control") == "no-store", "\(right)")
        #expect(try Self.object(right)["valid"] as? Bool == true)
        let again = try Self.check(client, code)
        #expect(again.status == 409 && again.errorCode == "code_used", "\(again)")
        // Its countdown ends with it.
        #expect(try client.get("/v1/countdowns/\(codeToken)").status == 404)

        // A new code after the cooldown: wrong until locked.
        try gate.redis.client().runOut(gateKey(.cooldown, Self.number))
        let next = try #require(try Self.object(client.send(phone: Self.number))["code"] as? String)
        let first = try Self.check(client, Self.wrong(next))
        #expect(first.status == 422 && first.errorCode == "wrong_code", "\(first)")
        #expect(try (Self.object(first)["error"] as? [String: Any])?["attempts_left"] as? Int == 2)
        #expect(try Self.check(client, Self.wrong(next)).errorCode == "wrong_code")
        let locked = try Self.check(client, Self.wrong(next))
        #expect(locked.status == 409 && locked.errorCode == "code_locked", "\(locked)")
        #expect(try Self.check(client, next).errorCode == "code_locked")

        // Outcome reports are refused for this purpose: no conversion can be forged.
        let report = try client.request("POST", "/v1/verifications", headers: [("Content-Type", "application/json")],
                                        body: #"{"phone": "\#(Self.number)", "outcome": "verified"}"#)
        #expect(report.status == 409 && report.errorCode == "codes_issued", "\(report)")
        #expect(try Self.check(client, "12345", phone: "+8613800138009").errorCode == "code_expired")
        #expect(try Self.check(client, "12a456").status == 400)

        let result = server.stop(grace: .seconds(5))
        #expect(result.stderr.contains("/v1/checks"), "the access log was written")
        for digits in [code, next] {
            #expect(!result.stderr.contains(digits) && !result.stdout.contains(digits), "a code in the log")
        }
    }

    /// A check refused because wrong codes locked the number (`--lockout-scope number`: 429
    /// `locked`) is not stored by a cache either: its answer keeps `Cache-Control: no-store`
    /// beside the lock's `Retry-After` and `RateLimit-Policy` (they replaced it before).
    @Test func aLockedNumbersCheckIsNotCachedEither() throws {
        let gate = try TestGate(serve: Self.flags + ["--lockout-scope", "number"])
        defer { gate.stop(grace: .seconds(2)) }
        let client = gate.client()
        let code = try #require(try Self.object(client.send(phone: Self.number))["code"] as? String)
        for _ in 0..<3 { _ = try Self.check(client, Self.wrong(code)) }
        let locked = try Self.check(client, code)
        #expect(locked.status == 429 && locked.errorCode == "locked", "\(locked)")
        #expect(locked.header("Cache-Control") == "no-store" && locked.header("Retry-After") != nil, "\(locked)")
        #expect(locked.header("RateLimit-Policy") == #""locked";q=3"#)
    }

    /// A page's request (any `Origin`, even an allowed one) is answered without the code:
    /// its user must get the code by SMS.
    @Test func aBrowserNeverGetsTheCode() throws {
        let gate = try TestGate(serve: Self.flags + ["--allow-origins", "https://app.example.com"])
        defer { gate.stop(grace: .seconds(2)) }
        let client = gate.client()
        let sent = try client.request(
            "POST", "/v1/sends", headers: [("Content-Type", "application/json"), ("Origin", "https://app.example.com")],
            body: #"{"phone": "\#(Self.number)"}"#)
        #expect(sent.status == 200, "\(sent)")
        let body = try Self.object(sent)
        #expect(body["code"] == nil && body["code_countdown_token"] != nil && body["code_expires_at"] != nil, "\(body)")
        // Nor its idempotent replay.
        let headers = [("Content-Type", "application/json"), ("Origin", "https://app.example.com"), ("Idempotency-Key", "page-1")]
        for _ in 0..<2 {
            let page = try client.request("POST", "/v1/sends", headers: headers, body: #"{"phone": "+8613800138001"}"#)
            let pageBody = try Self.object(page)
            #expect(page.status == 200 && pageBody["code"] == nil, "\(page)")
        }
        let backEnd = try client.request(
            "POST", "/v1/sends", headers: [("Content-Type", "application/json"), ("Idempotency-Key", "page-1")],
            body: #"{"phone": "+8613800138001"}"#)
        let replayed = try Self.object(backEnd)
        #expect(backEnd.header("Idempotent-Replayed") == "true" && replayed["code"] is String, "\(backEnd)")
    }

    /// With API keys, only a key with the `send` scope can send, so only it reads a code; a
    /// key that may only verify can check but not send.
    @Test func onlyAKeyThatMaySendReadsTheCode() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try "backend-key-0123456789 send,verify\nreader-key-0123456789 read,verify\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let gate = try TestGate(serve: Self.flags + ["--api-keys-file", file.path])
        defer { gate.stop(grace: .seconds(2)) }
        let reader = gate.client(apiKey: "reader-key-0123456789")
        let refused = try reader.send(phone: Self.number)
        #expect(refused.status == 403 && refused.errorCode == "forbidden" && !refused.text.contains("code_expires_at"), "\(refused)")
        let backEnd = gate.client(apiKey: "backend-key-0123456789")
        let code = try #require(try Self.object(backEnd.send(phone: Self.number))["code"] as? String)
        #expect(try Self.check(reader, code).status == 200)
        #expect(try Self.check(gate.client(), code).status == 401)
    }
}
