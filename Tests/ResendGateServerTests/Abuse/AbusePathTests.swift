import Foundation
import ResendGateTestSupport
import Testing

/// Paths with extra segments must name no route (`/v1/cooldowns/%2B447911123456/x` was
/// served as the number), and respelling a number must never give a second cooldown:
/// every spelling of one number is one Redis key, and text around a number is refused.
@Suite("Abuse: paths and spellings", .serialized, .ownThread)
struct AbusePathTests {
    static let e164 = "+447911123456"

    @Test func extraPathSegmentsAreNoRouteOnEveryRoute() throws {
        try withInputAbuseGate { gate in
            let allowed = try gate.client().send(phone: Self.e164)
            #expect(allowed.status == 200, "\(allowed)")
            let token = try #require(try allowed.decode(DecisionBody.self).countdown_token)
            let key = InputAbuseGate.cooldownKey(Self.e164)
            let keysBefore = try gate.redisKeys()

            let cases: [(String, String)] = [
                ("GET", "/v1/cooldowns/%2B447911123456/x"), ("DELETE", "/v1/cooldowns/%2B447911123456/x"),
                ("HEAD", "/v1/cooldowns/%2B447911123456/x"), ("DELETE", "/v1/cooldowns/%2B447911123456/"),
                ("DELETE", "/v1/cooldowns//%2B447911123456"), ("DELETE", "/v1/cooldowns/%2B447911123456/.."),
                ("DELETE", "/v1/cooldowns/x/../%2B447911123456"), ("GET", "/v1/cooldowns/%2B447911123456/x?purpose=default"),
                ("POST", "/v1/sends/x"), ("POST", "/v1/sends/"), ("POST", "/v1//sends"),
                ("GET", "/v1/countdowns/\(token)/x"), ("GET", "/v1/countdowns/\(token)/"), ("GET", "/v1/countdowns/\(token)/events/x"),
                ("GET", "/v1/countdowns/\(token)/x/events"), ("GET", "/v1/countdowns/\(token)/events/"), ("POST", "/v1/countdowns/\(token)/x"),
                ("GET", "/v1/countdowns//events"), ("GET", "/healthz/x"), ("GET", "/readyz/"), ("GET", "/metrics/x"),
                ("GET", "/openapi.yaml/x"), ("GET", "//"), ("GET", "/index.html"),
            ]
            for (method, target) in cases {
                let headers = method == "POST" ? [("Content-Type", "application/json")] : []
                let body = method == "POST" ? Array(#"{"phone": "+447911123457"}"#.utf8) : nil
                let response = try gate.client().request(method, target, headers: headers, body: body)
                #expect(response.status == 404, "\(method) \(target): \(response)")
                if method != "HEAD" { #expect(response.errorCode == "not_found", "\(method) \(target)") }
                #expect(response.header("Content-Type") == jsonContentType, "\(method) \(target)")
            }
            // Nothing was released, reserved or streamed.
            #expect(try gate.pttl(key) > 0, "a DELETE with extra segments must not release")
            #expect(try gate.redisKeys() == keysBefore)
            // The routes themselves still answer.
            #expect(try gate.client().get("/v1/cooldowns/%2B447911123456").status == 200)
            #expect(try gate.client().get("/v1/countdowns/\(token)").status == 200)
            // An encoded slash stays inside its segment: there it is a separator of the number.
            #expect(try gate.client().get("/v1/cooldowns/%2B44%2F7911%2F123456").decode(CooldownBody.self).phone == Self.e164)
        }
    }

    static let spellings = [
        "+447911123456", "+44 7911 123456", "+44-7911-123456", "+44 (0) 7911 123456", "07911 123456", "0044 7911 123456",
        "tel:+44-7911-123456", "＋４４ ７９１１ １２３４５６", "+44.7911.123456", "  +44 7911 123456  ",
    ]

    @Test func everySpellingOfANumberIsOneKeyAndTextAroundItIsRefused() throws {
        try withInputAbuseGate { gate in
            let first = try gate.client().send(phone: Self.spellings[0])
            #expect(first.status == 200)
            for spelling in Self.spellings.dropFirst() {
                let again = try gate.client().send(phone: spelling)
                #expect(again.status == 429, "\(spelling): \(again)")
                #expect(try again.decode(DecisionBody.self).phone == Self.e164, "\(spelling)")
                let encoded = try #require(spelling.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let peek = try gate.client().get("/v1/cooldowns/\(encoded)")
                #expect(try peek.decode(CooldownBody.self).phone == Self.e164, "\(spelling)")
                #expect(try peek.decode(CooldownBody.self).active, "\(spelling)")
            }
            let cooldowns = try gate.redisKeys().filter { $0.hasSuffix(":cooldown") }
            #expect(cooldowns == [InputAbuseGate.cooldownKey(Self.e164)], "one number, one key: \(cooldowns)")

            // Text around the number: refused in the body and in the path, and the refused
            // DELETE leaves the cooldown running.
            let keys = try gate.redisKeys()
            for text in ["Tel.: +447911123456!!!", "+44 7911 123456 ext. 12", "+447911123456#1", "call 07911 123456", "+44 7911 123456 x"] {
                let send = try gate.client().send(phone: text)
                #expect(send.status == 400, "\(text): \(send)")
                #expect(send.errorCode == "invalid_phone", "\(text)")
                let encoded = try #require(text.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                #expect(try gate.client().delete("/v1/cooldowns/\(encoded)").status == 400, "DELETE \(text)")
            }
            #expect(try gate.redisKeys() == keys)
            #expect(try gate.pttl(InputAbuseGate.cooldownKey(Self.e164)) > 0)
        }
    }
}
