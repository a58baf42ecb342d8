import Foundation
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// docs/guide.md's sample back end (`Examples/backend/backend.py`, Python) as a child process
/// in front of a real `resendgate serve --issue-codes` with scoped API keys, driven over HTTP
/// as an app drives it: the code comes only through the fake SMS provider's output, never in
/// an answer; every answer the gate gives reaches the app as the guide says.
@Suite("The guide's sample back end against a live gate", .ownThread)
struct SampleBackendTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sendKey = "guide-backend-key-0123456789"  // bare: send, read, verify
    static let releaseKey = "guide-refunds-key-0123456789"  // release only
    static let failing = "+8613800138999"  // the fake provider fails for it

    /// The gate as the guide starts it, with the guide's two keys, and the back end in front.
    static func withBackEnd(
        gateFlags: [String] = [], _ body: (_ app: HTTPTestClient, _ backEnd: ServerProcess, _ gate: TestGate) throws -> Void
    ) throws {
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("guide-keys-\(UUID().uuidString)")
        try "\(sendKey)\n\(releaseKey) release\n".write(to: keys, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keys) }
        let gate = try TestGate(serve: [
            "--workers", "1", "--issue-codes", "--code-secret", "the guide test's code secret",
            "--api-keys-file", keys.path,
        ] + gateFlags)
        defer { gate.stop(grace: .seconds(2)) }
        let backEnd = try ServerProcess("/usr/bin/env", [
            "python3", root.appendingPathComponent("Examples/backend/backend.py").path, "--port", "0",
            "--gate", "http://127.0.0.1:\(gate.port)", "--sms-fail", failing,
        ], environment: ["GATE_API_KEY": sendKey, "GATE_RELEASE_KEY": releaseKey, "PYTHONDONTWRITEBYTECODE": "1"])
        defer { backEnd.stop(grace: .seconds(2)) }
        let port = try backEnd.waitForListeningPort(timeout: .seconds(30))
        try body(HTTPTestClient(port: port), backEnd, gate)
    }

    static func post(_ app: HTTPTestClient, _ path: String, _ json: String, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try app.request("POST", path, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    static func send(_ app: HTTPTestClient, _ phone: String, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try post(app, "/v1/sends", #"{"phone": "\#(phone)", "purpose": "login"}"#, headers: headers)
    }

    static func check(_ app: HTTPTestClient, _ phone: String, _ code: String) throws -> RawHTTPResponse {
        try post(app, "/v1/checks", #"{"phone": "\#(phone)", "purpose": "login", "code": "\#(code)"}"#)
    }

    static func object(_ response: RawHTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(response)")
    }

    static func error(_ response: RawHTTPResponse) throws -> [String: Any] {
        try #require(try object(response)["error"] as? [String: Any], "\(response)")
    }

    /// The code of the `index`th SMS the fake provider printed for `phone` (0: the first).
    static func smsCode(_ backEnd: ServerProcess, _ phone: String, index: Int = 0) throws -> String {
        let line = try backEnd.waitForLine(containing: "SMS to \(phone): ", beyond: index)
        let match = try #require(line.firstMatch(of: /: (\d{6}) is your sign-in code/), "\(line)")
        return String(match.output.1)
    }

    static func texts(_ backEnd: ServerProcess, _ phone: String) -> Int {
        backEnd.lines(containing: "SMS to \(phone)").count
    }

    /// docs/guide.md shows this answer of the back end as it is (`# STATUS BODY`, or `# BODY`
    /// without `status`), so the guide's words for the user cannot drift from the back end's.
    static func expectGuideShows(_ response: RawHTTPResponse, status: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let guide = try String(contentsOf: root.appendingPathComponent("docs/guide.md"), encoding: .utf8)
        let line = "# " + (status ? "\(response.status) " : "") + response.text
        #expect(guide.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == line },
                "docs/guide.md does not show \(line)", sourceLocation: sourceLocation)
    }

    /// A code of the same length that is not `code`.
    static func wrong(_ code: String) -> String {
        String(code.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) })
    }

    /// Send, the code from the SMS, right once then used; a resend within the cooldown is the
    /// gate's 429 with its Retry-After and no second SMS; the countdown passes through.
    @Test func sendCheckRightOnceAndCooldown() throws {
        try Self.withBackEnd { app, backEnd, _ in
            let phone = "+8613800138000"
            let sent = try Self.send(app, "+86 138 0013 8000")
            #expect(sent.status == 200, "\(sent)\n\(backEnd.stderr)")
            let decision = try Self.object(sent)
            #expect(decision["allowed"] as? Bool == true && decision["code"] == nil, "the app never sees the code: \(sent)")
            let code = try Self.smsCode(backEnd, phone)

            let again = try Self.send(app, phone)
            #expect(again.status == 429 && again.header("Retry-After") != nil, "\(again)")
            let refusal = try Self.object(again)
            #expect(refusal["reason"] as? String == "cooldown")
            #expect(again.header("Retry-After") == (refusal["retry_after"] as? Int).map(String.init))
            #expect(Self.texts(backEnd, phone) == 1, "a refused send texts nothing")

            let token = try #require(decision["countdown_token"] as? String)
            let reading = try app.get("/v1/countdowns/\(token)")
            #expect(reading.status == 200, "\(reading)")
            let left = try Self.object(reading)["retry_after"] as? Int
            #expect(left.map { $0 > 0 } == true, "\(reading)")
            let stream = try app.openStream("/v1/countdowns/\(token)/events")
            #expect(try stream.next()?.event == "tick")
            stream.connection.close()

            let right = try Self.check(app, phone, code)
            #expect(right.status == 200, "\(right)")
            let signedIn = try Self.object(right)
            #expect(signedIn["valid"] as? Bool == true && (signedIn["session"] as? String)?.isEmpty == false)
            let used = try Self.check(app, phone, code)
            #expect(used.status == 409 && used.errorCode == "code_used", "\(used)")
            try Self.expectGuideShows(used)
        }
    }

    /// A retried tap (the same Idempotency-Key) is answered again without a second SMS; wrong
    /// codes count down until the code locks, and then not even the right one passes.
    @Test func replayTextsOnceAndWrongCodesLock() throws {
        try Self.withBackEnd { app, backEnd, _ in
            let phone = "+8613800138001"
            let first = try Self.send(app, phone, headers: [("Idempotency-Key", "tap-1")])
            #expect(first.status == 200 && first.header("Idempotent-Replayed") == nil, "\(first)")
            let code = try Self.smsCode(backEnd, phone)
            let replay = try Self.send(app, phone, headers: [("Idempotency-Key", "tap-1")])
            #expect(replay.status == 200 && replay.header("Idempotent-Replayed") == "true", "\(replay)")
            #expect(try Self.object(replay)["code"] == nil)
            #expect(Self.texts(backEnd, phone) == 1, "a replay is not texted again:\n\(backEnd.stdout)")

            for left in [4, 3, 2, 1] {  // --max-failed-checks 5, the default the guide runs with
                let wrong = try Self.check(app, phone, Self.wrong(code))
                #expect(wrong.status == 422 && wrong.errorCode == "wrong_code", "\(wrong)")
                #expect(try Self.error(wrong)["attempts_left"] as? Int == left)
                if left == 4 { try Self.expectGuideShows(wrong, status: false) }
            }
            let locked = try Self.check(app, phone, Self.wrong(code))
            #expect(locked.status == 409 && locked.errorCode == "code_locked", "\(locked)")
            let right = try Self.check(app, phone, code)
            #expect(right.status == 409 && right.errorCode == "code_locked", "\(right)")
        }
    }

    /// The provider fails: the back end refunds the send (its release key), so the code is
    /// void and the number free at once; the second failure's refund is refused (one a day),
    /// and the app is told to wait out the cooldown. The send key alone cannot refund.
    @Test func providerFailureRefundsAndVoidsTheCode() throws {
        try Self.withBackEnd { app, backEnd, gate in
            let failed = try Self.send(app, Self.failing)
            #expect(failed.status == 502 && failed.errorCode == "sms_failed", "\(failed)")
            #expect(try Self.error(failed)["retry_after"] as? Int == 0)
            try Self.expectGuideShows(failed)
            let peek = try gate.client(apiKey: Self.sendKey).get("/v1/cooldowns/%2B8613800138999?purpose=login")
            let active = try Self.object(peek)["active"] as? Bool
            #expect(peek.status == 200 && active == false, "refunded: \(peek)")
            let voided = try Self.check(app, Self.failing, "123456")
            #expect(voided.status == 410 && voided.errorCode == "code_voided", "\(voided)")
            try Self.expectGuideShows(voided)

            let twice = try Self.send(app, Self.failing)
            #expect(twice.status == 502 && twice.errorCode == "sms_failed", "\(twice)")
            let wait = try #require(try Self.error(twice)["retry_after"] as? Int)
            #expect(wait > 50 && wait <= 60 && twice.header("Retry-After") == "\(wait)", "\(twice)")
            try Self.expectGuideShows(twice)
            let running = try gate.client(apiKey: Self.sendKey).get("/v1/cooldowns/%2B8613800138999?purpose=login")
            let stillActive = try Self.object(running)["active"] as? Bool
            #expect(stillActive == true, "the refund was refused: \(running)")
            #expect(Self.texts(backEnd, Self.failing) == 2 && backEnd.lines(containing: "SMS to \(Self.failing): ").isEmpty)

            // The key the back end sends with cannot give a send back: release is granted by name.
            let refund = try gate.client(apiKey: Self.sendKey).delete("/v1/cooldowns/%2B8613800138999?purpose=login")
            #expect(refund.status == 403 && refund.errorCode == "forbidden", "\(refund)")
        }
    }

    /// Redis stalls: the gate's 503 `store_unavailable` reaches the app as it is, and no SMS goes.
    @Test func storeUnavailablePassesThrough() throws {
        try Self.withBackEnd { app, backEnd, gate in
            gate.redis.pause()
            defer { gate.redis.resume() }
            let phone = "+8613800138002"
            let refused = try Self.send(app, phone)
            #expect(refused.status == 503 && refused.errorCode == "store_unavailable", "\(refused)")
            #expect(Self.texts(backEnd, phone) == 0)
        }
    }

    /// An attacker's app cannot pick the address the per-IP cap counts: the back end sends the
    /// connection's, and a `client_ip` (or a forwarding header) in the app's request is ignored.
    @Test func theAppCannotChooseItsClientAddress() throws {
        try Self.withBackEnd(gateFlags: ["--ip-max-sends", "1"]) { app, backEnd, _ in
            #expect(try Self.send(app, "+8613800138004").status == 200)
            let spoofed = try Self.post(app, "/v1/sends", #"{"phone": "+8613800138005", "purpose": "login", "client_ip": "203.0.113.9"}"#,
                                        headers: [("X-Forwarded-For", "203.0.113.9")])
            let reason = try Self.object(spoofed)["reason"] as? String
            #expect(spoofed.status == 429 && reason == "ip_limit", "\(spoofed)")
            #expect(Self.texts(backEnd, "+8613800138005") == 0)
        }
    }
}
