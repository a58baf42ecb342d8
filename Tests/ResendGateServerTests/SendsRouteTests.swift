import Foundation
import ResendGateTestSupport
import Testing

/// `POST /v1/sends` over a real socket against a real Redis: the 200 and 429 answers
/// of docs/API.md, field by field and header by header.
@Suite("POST /v1/sends", .ownThread)
struct SendsRouteTests {
    static let decisionKeys: Set<String> = [
        "allowed", "phone", "purpose", "retry_after", "retry_after_ms", "resend_at", "server_time",
        "next_retry_after", "sends_left",
    ]

    @Test func allowsTheFirstSendWithTheContractShape() throws {
        try withRunningGate { gate in
            let response = try gate.client().send(phone: "+86 138 0013 8000", purpose: "login")
            #expect(response.statusLine == "HTTP/1.1 200 OK")
            #expect(response.header("Content-Type") == jsonContentType)
            #expect(response.header("Retry-After") == nil)
            let keys = try response.jsonKeys()
            #expect(keys == Self.decisionKeys.union(["countdown_token"]))
            let decision = try response.decode(DecisionBody.self)
            #expect(decision.allowed == true)
            #expect(decision.reason == nil)
            #expect(decision.phone == "+8613800138000")
            #expect(decision.purpose == "login")
            #expect(decision.retry_after == 60)
            #expect(decision.retry_after_ms == 60_000)
            // The token is the cooldown's: it reads this send's countdown, with no API key.
            let token = try #require(decision.countdown_token, "an allowed send has a countdown_token")
            let countdown = try gate.client().get("/v1/countdowns/\(token)")
            #expect(countdown.status == 200, "\(countdown)")
            let reading = try #require(try JSONSerialization.jsonObject(with: Data(countdown.body)) as? [String: Any])
            #expect(reading["active"] as? Bool == true)
            #expect((58...60).contains(reading["retry_after"] as? Int ?? 0), "\(reading)")
            let resendAt = try #require(RFC3339.milliseconds(decision.resend_at), "\(decision.resend_at)")
            let serverTime = try #require(RFC3339.milliseconds(decision.server_time), "\(decision.server_time)")
            #expect(resendAt - serverTime == 60_000)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(abs(serverTime - now) < 5_000)
        }
    }

    @Test func deniesAnotherSpellingOfTheSameNumberWithCooldownAndRateLimitHeaders() throws {
        try withRunningGate { gate in
            let client = gate.client()
            let first = try client.send(phone: "+8613800138000", purpose: "login")
            #expect(first.status == 200)
            for spelling in ["+86-138-0013-8000", "008613800138000", "13800138000", "tel:+86-138-0013-8000", "＋８６１３８００１３８０００"] {
                let response = try client.send(phone: spelling, purpose: "login")
                #expect(response.statusLine == "HTTP/1.1 429 Too Many Requests", "\(spelling): \(response)")
                #expect(response.header("Content-Type") == jsonContentType)
                #expect(try response.jsonKeys().subtracting(["countdown_token"]) == Self.decisionKeys.union(["reason"]))
                let decision = try response.decode(DecisionBody.self)
                #expect(decision.allowed == false)
                #expect(decision.reason == "cooldown")
                #expect(decision.phone == "+8613800138000")
                #expect(decision.purpose == "login")
                #expect((59...60).contains(decision.retry_after))
                #expect((59_000...60_000).contains(decision.retry_after_ms))
                #expect(decision.retry_after == (decision.retry_after_ms + 999) / 1000)
                let resendAt = try #require(RFC3339.milliseconds(decision.resend_at))
                let serverTime = try #require(RFC3339.milliseconds(decision.server_time))
                #expect(resendAt - serverTime == decision.retry_after_ms)

                #expect(response.headers(named: "Retry-After") == ["\(decision.retry_after)"])
                let policy = try #require(response.header("RateLimit-Policy"))
                let limit = try #require(response.header("RateLimit"))
                let (policyName, policyParameters) = try Self.structuredItem(policy)
                let (limitName, limitParameters) = try Self.structuredItem(limit)
                #expect(policyName == "cooldown")
                #expect(policyParameters["q"] == "1")
                #expect(limitName == policyName)
                #expect(limitParameters["r"] == "0")
                #expect(limitParameters["t"] == "\(decision.retry_after)")
            }
        }
    }

    @Test func purposeDefaultsToDefaultAndPurposesHaveTheirOwnCooldowns() throws {
        try withRunningGate { gate in
            let client = gate.client()
            let unnamed = try client.send(phone: "+447911123456")
            #expect(unnamed.status == 200)
            #expect(try unnamed.decode(DecisionBody.self).purpose == "default")
            #expect(try client.send(phone: "+447911123456", purpose: "default").status == 429)
            #expect(try client.send(phone: "+447911123456", purpose: "login").status == 200)
            #expect(try client.send(phone: "+447911123456", purpose: "reset-password").status == 200)
            #expect(try client.send(phone: "+447911123456", purpose: "login").status == 429)
        }
    }

    @Test func acceptsClientIPAndIdempotencyKeyAndAJSONMediaTypeWithParameters() throws {
        try withRunningGate { gate in
            let response = try gate.client().send(
                #"{"phone": "+8613800138001", "purpose": "login", "client_ip": "2001:db8::7"}"#,
                headers: [("Content-Type", "application/json;charset=UTF-8"), ("Idempotency-Key", "abc-123")])
            #expect(response.status == 200, "\(response)")
            let v4 = try gate.client().send(#"{"phone": "+8613800138002", "client_ip": "203.0.113.7"}"#)
            #expect(v4.status == 200, "\(v4)")
        }
    }

    @Test func readsAChunkedBody() throws {
        try withRunningGate { gate in
            let connection = try RawHTTPConnection(port: gate.port)
            let json = #"{"phone": "+8613800138003"}"#
            let half = json.utf8.count / 2
            try connection.write(
                "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + String(half, radix: 16) + "\r\n" + String(json.prefix(half)) + "\r\n"
                    + String(json.utf8.count - half, radix: 16) + "\r\n" + String(json.dropFirst(half)) + "\r\n0\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200, "\(response)")
        }
    }

    @Test func servesSeveralRequestsOnOneKeptAliveConnection() throws {
        try withRunningGate { gate in
            let client = gate.client()
            let connection = try RawHTTPConnection(port: gate.port)
            let body = Array(#"{"phone": "+8613800138004"}"#.utf8)
            let post = client.requestBytes("POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: body, keepAlive: true)
            try connection.write(post)
            #expect(try connection.readResponse().status == 200)
            try connection.write(post)
            #expect(try connection.readResponse().status == 429)
            try connection.write(client.requestBytes("GET", "/healthz", keepAlive: true))
            #expect(try connection.readResponse().status == 200)
        }
    }

    /// `"name";k=v;k=v`, an RFC 8941 item with parameters, as the RateLimit headers use it.
    static func structuredItem(_ text: String) throws -> (String, [String: String]) {
        let parts = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let name = parts.first, name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") else {
            throw RawHTTPError.malformed("not a structured item: \(text)")
        }
        var parameters: [String: String] = [:]
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { throw RawHTTPError.malformed("parameter \(parameter) in \(text)") }
            parameters[String(pair[0])] = String(pair[1])
        }
        return (String(name.dropFirst().dropLast()), parameters)
    }
}
