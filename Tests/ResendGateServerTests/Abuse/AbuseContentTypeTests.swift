import Foundation
import ResendGateTestSupport
import Testing

/// A web page can POST to a gate on the user's loopback without CORS when the request
/// is "simple": `fetch(url, {method: 'POST', mode: 'no-cors', body: new Blob([json])})`
/// sends no Content-Type at all, and a form sends `text/plain` or a form type. Each must
/// be refused with 415 before anything reaches Redis; only `application/json` passes.
@Suite("Abuse: Content-Type of a send", .serialized, .ownThread)
struct AbuseContentTypeTests {
    static let phone = "+447911123456"
    static let body = #"{"phone": "+447911123456", "purpose": "login"}"#

    /// What a page can send without a preflight, and the near misses around JSON.
    static let refusedTypes: [String?] = [
        nil, "", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/problem+json", "text/json", "application/jsonx",
        "application/json, text/plain", "text/plain; x=application/json",
    ]

    @Test func aSendWithoutJSONContentTypeIsRefusedAndWritesNothing() throws {
        try withInputAbuseGate { gate in
            for type in Self.refusedTypes {
                let headers = type.map { [("Content-Type", $0)] } ?? []
                let response = try gate.client().send(Self.body, headers: headers)
                #expect(response.status == 415, "Content-Type \(type ?? "absent"): \(response)")
                #expect(response.errorCode == "unsupported_media_type", "Content-Type \(type ?? "absent")")
            }
            #expect(try gate.redisKeys() == [], "a refused send must write nothing")

            // The same requests pipelined on one connection, then a valid one: only the last is decided.
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            var bytes: [UInt8] = []
            for type in Self.refusedTypes {
                bytes += gate.client().requestBytes(
                    "POST", "/v1/sends", headers: type.map { [("Content-Type", $0)] } ?? [], body: Array(Self.body.utf8), keepAlive: true)
            }
            bytes += gate.client().requestBytes(
                "POST", "/v1/sends", headers: [("Content-Type", "Application/JSON; charset=UTF-8")], body: Array(Self.body.utf8))
            try connection.write(bytes)
            for type in Self.refusedTypes {
                #expect(try connection.readResponse().status == 415, "pipelined, Content-Type \(type ?? "absent")")
            }
            #expect(try connection.readResponse().status == 200, "application/json in any case, with a charset")
            #expect(try gate.pttl(InputAbuseGate.cooldownKey(Self.phone, purpose: "login")) > 0)
        }
    }

    /// An API key does not excuse the body's type: the check is the route's, not the caller's.
    @Test func anAPIKeyDoesNotLetAnotherTypeThrough() throws {
        try withInputAbuseGate(apiKey: "abuse-test-key-0123456789") { gate in
            for type in [nil, "text/plain"] as [String?] {
                let response = try gate.client().send(Self.body, headers: type.map { [("Content-Type", $0)] } ?? [])
                #expect(response.status == 415, "Content-Type \(type ?? "absent"): \(response)")
            }
            #expect(try gate.redisKeys() == [])
            #expect(try gate.client().send(Self.body).status == 200)
        }
    }
}
