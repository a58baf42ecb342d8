import Foundation
import ResendGate
import ResendGateServer
import Testing

@Suite("The HTTP API's JSON")
struct JSONWriterTests {
    @Test func formatsRFC3339WithMilliseconds() {
        func timestamp(_ milliseconds: Int64) -> String {
            var json = JSONWriter()
            json.timestamp(millisecondsSince1970: milliseconds)
            return json.string
        }
        #expect(timestamp(0) == #""1970-01-01T00:00:00.000Z""#)
        #expect(timestamp(1_796_026_145_123) == #""2026-11-30T08:09:05.123Z""#)
        #expect(timestamp(951_782_400_000) == #""2000-02-29T00:00:00.000Z""#)
        #expect(timestamp(-1) == #""1969-12-31T23:59:59.999Z""#)
    }

    @Test func decisionJSONHasTheContractShape() throws {
        let phone = try PhoneNumber(parsing: "+8613800138000")
        var decision = Decision(
            SendRequest(phone: phone, purpose: try Purpose("login")), refusedBy: .cooldown, wait: 59_001,
            now: 1_796_026_145_000, next: 120_000, sendsInWindow: 1, sendsLeft: 4)
        decision.countdownToken = CountdownToken(validating: String(repeating: "A", count: 44))
        var json = JSONWriter()
        decision.writeJSON(to: &json)
        #expect(json.string == #"{"allowed":false,"reason":"cooldown","phone":"+8613800138000","purpose":"login","retry_after":60,"retry_after_ms":59001,"resend_at":"2026-11-30T08:10:04.001Z","server_time":"2026-11-30T08:09:05.000Z","next_retry_after":120,"sends_left":4,"countdown_token":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#)
    }

    /// `GET /v1/prefixes`: an array of objects, conversions to four decimals.
    @Test func prefixFiguresInAnArrayWithTheirConversion() throws {
        let uk = try PhoneNumber(parsing: "+447911123456")
        let figures = PrefixFigures(
            purpose: try Purpose("signup"), prefix: PrefixKey(uk, digits: 4), blocked: true, sends: 21, verifications: 1,
            retryAfterMilliseconds: 3_300_001, blockedSinceMilliseconds: 1_796_026_145_000, serverTimeMilliseconds: 1_796_026_145_123)
        var json = JSONWriter()
        json.beginObject()
        json.key("prefixes")
        json.beginArray()
        figures.writeJSON(to: &json)
        figures.writeJSON(to: &json)
        json.endArray()
        json.field("next", true)
        json.endObject()
        let one = #"{"prefix":"+447911","calling_code":44,"purpose":"signup","blocked":true,"sends":21,"verifications":1,"conversion":0.0476,"since":"2026-11-30T08:09:05.000Z","retry_after":3301,"retry_after_ms":3300001,"free_at":"2026-11-30T09:04:05.124Z","server_time":"2026-11-30T08:09:05.123Z"}"#
        #expect(json.string == #"{"prefixes":["# + one + "," + one + #"],"next":true}"#)
        for (fraction, text) in [(0.0, "0"), (1.0, "1"), (0.5, "0.5"), (0.05, "0.05"), (0.00004, "0"), (0.8333333, "0.8333"), (0.0001, "0.0001"), (2.5, "2.5")] {
            var number = JSONWriter()
            number.value(fraction: fraction)
            #expect(number.string == text, "\(fraction)")
        }
    }

    @Test func jsonWriterEscapesControlCharactersAndQuotes() {
        var json = JSONWriter()
        json.beginObject()
        json.field("message", "a\"b\\c\nd\u{1}é")
        json.endObject()
        #expect(json.string == #"{"message":"a\"b\\c\nd\u0001é"}"#)
    }

    /// A string with nothing to escape is copied whole, others byte by byte: on generated
    /// strings (plain, with quotes, backslashes, controls, DEL and non-ASCII), both give
    /// JSON that Foundation's parser reads back as the same string.
    @Test func everyStringRoundTripsThroughFoundationsParser() throws {
        let alphabet: [Character] = ["a", "Z", "0", "+", " ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "中", "😀", "/"]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            let length = Int.random(in: 0...24, using: &generator)
            // Half the strings plain (the copy), half drawn from every kind of character.
            let pool = round % 2 == 0 ? Array(alphabet.prefix(5)) + ["é", "中", "/"] : alphabet
            let text = String((0..<length).map { _ in pool.randomElement(using: &generator)! })
            var json = JSONWriter()
            json.beginObject()
            json.field("v", text)
            json.endObject()
            let parsed = try JSONSerialization.jsonObject(with: Data(json.string.utf8)) as? [String: String]
            #expect(parsed?["v"] == text, "\(json.string)")
        }
    }
}
