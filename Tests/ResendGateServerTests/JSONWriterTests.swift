import ResendGate
import ResendGateServer
import Testing

@Suite("The HTTP API's JSON")
struct JSONWriterTests {
    @Test func formatsRFC3339WithMilliseconds() {
        #expect(ResendGateServer.RFC3339.string(millisecondsSince1970: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ResendGateServer.RFC3339.string(millisecondsSince1970: 1_796_026_145_123) == "2026-11-30T08:09:05.123Z")
        #expect(ResendGateServer.RFC3339.string(millisecondsSince1970: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(ResendGateServer.RFC3339.string(millisecondsSince1970: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test func decisionJSONHasTheContractShape() throws {
        let phone = try PhoneNumber(parsing: "+8613800138000")
        let decision = Decision(
            allowed: false, reason: .cooldown, phone: phone, purpose: try Purpose("login"),
            retryAfterMilliseconds: 59_001, serverTimeMilliseconds: 1_796_026_145_000, sendsInWindow: 1,
            sendsLeft: 4, nextRetryAfterMilliseconds: 120_000)
        var json = JSONWriter()
        decision.writeJSON(to: &json, countdownToken: "abc")
        #expect(json.string == #"{"allowed":false,"reason":"cooldown","phone":"+8613800138000","purpose":"login","retry_after":60,"retry_after_ms":59001,"resend_at":"2026-11-30T08:10:04.001Z","server_time":"2026-11-30T08:09:05.000Z","next_retry_after":120,"sends_left":4,"countdown_token":"abc"}"#)
    }

    @Test func jsonWriterEscapesControlCharactersAndQuotes() {
        var json = JSONWriter()
        json.beginObject()
        json.field("message", "a\"b\\c\nd\u{1}é")
        json.endObject()
        #expect(json.string == #"{"message":"a\"b\\c\nd\u0001é"}"#)
    }
}
