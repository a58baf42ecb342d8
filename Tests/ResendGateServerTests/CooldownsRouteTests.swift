import Foundation
import ResendGateTestSupport
import Testing

/// `GET /v1/cooldowns/{phone}` (peek, never consumes) and `DELETE` (release).
@Suite("GET and DELETE /v1/cooldowns/{phone}", .ownThread)
struct CooldownsRouteTests {
    static let statusKeys: Set<String> = [
        "phone", "purpose", "active", "retry_after", "retry_after_ms", "resend_at", "server_time",
    ]

    @Test func peekWithoutACooldownIsInactiveWithNullResendAt() throws {
        try withRunningGate { gate in
            let response = try gate.client().get("/v1/cooldowns/%2B8613800138000?purpose=login")
            #expect(response.statusLine == "HTTP/1.1 200 OK")
            #expect(response.header("Content-Type") == jsonContentType)
            #expect(try response.jsonKeys() == Self.statusKeys)
            #expect(try response.jsonIsNull("resend_at"))
            let status = try response.decode(CooldownBody.self)
            #expect(status == CooldownBody(
                phone: "+8613800138000", purpose: "login", active: false, retry_after: 0, retry_after_ms: 0,
                resend_at: nil, server_time: status.server_time))
            #expect(RFC3339.milliseconds(status.server_time) != nil, "\(status.server_time)")
            // Peeking consumed nothing.
            #expect(try gate.client().send(phone: "+8613800138000", purpose: "login").status == 200)
        }
    }

    @Test func peekShowsARunningCooldownWithoutConsumingIt() throws {
        try withRunningGate { gate in
            let client = gate.client()
            #expect(try client.send(phone: "+8613800138000", purpose: "login").status == 200)
            for _ in 0..<3 {
                let response = try client.get("/v1/cooldowns/%2B8613800138000?purpose=login")
                #expect(response.status == 200)
                #expect(try response.jsonKeys() == Self.statusKeys)
                let status = try response.decode(CooldownBody.self)
                #expect(status.phone == "+8613800138000")
                #expect(status.purpose == "login")
                #expect(status.active == true)
                #expect((59...60).contains(status.retry_after))
                #expect((59_000...60_000).contains(status.retry_after_ms))
                #expect(status.retry_after == (status.retry_after_ms + 999) / 1000)
                let resendAt = try #require(status.resend_at.flatMap(RFC3339.milliseconds))
                let serverTime = try #require(RFC3339.milliseconds(status.server_time))
                #expect(resendAt - serverTime == status.retry_after_ms)
            }
            // Another purpose of the same number has no cooldown; no purpose means "default".
            let other = try client.get("/v1/cooldowns/%2B8613800138000").decode(CooldownBody.self)
            #expect(other.purpose == "default")
            #expect(other.active == false)
            #expect(try client.send(phone: "+8613800138000", purpose: "login").status == 429)
        }
    }

    @Test func aNationalNumberInThePathUsesTheDefaultRegion() throws {
        try withRunningGate(region: "CN") { gate in
            let client = gate.client()
            #expect(try client.send(phone: "+8613800138000").status == 200)
            for spelling in ["13800138000", "%2B86%20138%200013%208000", "008613800138000", "%2B86-138-0013-8000"] {
                let response = try client.get("/v1/cooldowns/\(spelling)")
                #expect(response.status == 200, "\(spelling): \(response)")
                let status = try response.decode(CooldownBody.self)
                #expect(status.phone == "+8613800138000", "\(spelling)")
                #expect(status.active == true, "\(spelling)")
            }
        }
    }

    @Test func aNationalNumberWithoutADefaultRegionIsInvalid() throws {
        try withRunningGate(region: nil) { gate in
            let response = try gate.client().get("/v1/cooldowns/13800138000")
            #expect(response.status == 400)
            try ErrorResponseTests.expectError(response, code: "invalid_phone", "national number, no region")
            #expect(try gate.client().send(phone: "13800138000").errorCode == "invalid_phone")
        }
    }

    @Test func deleteReleasesSoTheNextSendIsAllowedAtOnce() throws {
        try withRunningGate { gate in
            let client = gate.client()
            #expect(try client.send(phone: "+8613800138000", purpose: "login").status == 200)
            #expect(try client.send(phone: "+8613800138000", purpose: "login").status == 429)
            let released = try client.delete("/v1/cooldowns/%2B8613800138000?purpose=login")
            #expect(released.statusLine == "HTTP/1.1 204 No Content")
            #expect(released.body.isEmpty)
            let peek = try client.get("/v1/cooldowns/%2B8613800138000?purpose=login").decode(CooldownBody.self)
            #expect(peek.active == false)
            let again = try client.send(phone: "+8613800138000", purpose: "login")
            #expect(again.status == 200)
            #expect(try again.decode(DecisionBody.self).retry_after == 60)
        }
    }

    @Test func deleteWithoutACooldownIsStill204() throws {
        try withRunningGate { gate in
            let released = try gate.client().delete("/v1/cooldowns/13800138000?purpose=login")
            #expect(released.status == 204)
            #expect(released.body.isEmpty)
        }
    }

    @Test func headAnswersTheHeadersOfGet() throws {
        try withRunningGate { gate in
            let response = try gate.client().request("HEAD", "/v1/cooldowns/%2B8613800138000")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == jsonContentType)
            #expect(response.body.isEmpty)
        }
    }

    @Test func badPathsAndQueriesGet400() throws {
        try withRunningGate { gate in
            let cases: [(String, String)] = [
                ("/v1/cooldowns/12", "invalid_phone"),
                ("/v1/cooldowns/%ZZ8613800138000", "invalid_phone"),
                ("/v1/cooldowns/%2", "invalid_phone"),
                ("/v1/cooldowns/%FF%FE", "invalid_phone"),
                ("/v1/cooldowns/", "invalid_phone"),
                ("/v1/cooldowns/%2B8613800138000?purpose=Login", "invalid_purpose"),
                ("/v1/cooldowns/%2B8613800138000?purpose=", "invalid_purpose"),
                ("/v1/cooldowns/%2B8613800138000?purpose=a&purpose=b", "invalid_field"),
                ("/v1/cooldowns/%2B8613800138000?purpose=%Z1", "invalid_field"),
            ]
            for (target, code) in cases {
                for method in ["GET", "DELETE"] {
                    let response = try gate.client().request(method, target)
                    #expect(response.status == 400, "\(method) \(target): \(response)")
                    try ErrorResponseTests.expectError(response, code: code, "\(method) \(target)")
                }
            }
        }
    }
}
