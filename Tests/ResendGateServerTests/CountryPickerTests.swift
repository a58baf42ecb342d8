import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// Issue 15, item 7: a request's `region` (a country picker) reads a nationally written
/// number in that region instead of the server's default; a number with a country code
/// ignores it, and it never relaxes `--allow-regions`.
@Suite("Country picker: a request's region", .ownThread)
struct CountryPickerTests {
    @Test func aNationalNumberIsReadInThePickedRegion() throws {
        try withRunningGate(region: "CN") { gate in
            let client = gate.client()
            let picked = try client.send(#"{"phone": "07400 123456", "region": "gb"}"#)
            #expect(picked.status == 200, "\(picked)")
            #expect(try picked.decode(DecisionBody.self).phone == "+447400123456")
            // The same text without a region is read in the default region (CN): not a number there.
            #expect(try client.send(#"{"phone": "07400 123456"}"#).errorCode == "invalid_phone")
            // And with the region again: the same number, in its cooldown (the parse cache
            // keys on the region too, so neither answer leaked into the other).
            let again = try client.send(#"{"phone": "074 0012 3456", "region": "GB"}"#)
            #expect(again.status == 429)
            #expect(try again.decode(DecisionBody.self).phone == "+447400123456")
            // A number with a country code ignores the picked region.
            let international = try client.send(#"{"phone": "+86 138 0013 8000", "region": "GB"}"#)
            #expect(try international.decode(DecisionBody.self).phone == "+8613800138000")
            // The cooldown routes read the path's number in ?region= too.
            let peek = try client.get("/v1/cooldowns/07400123456?region=GB").decode(CooldownBody.self)
            #expect(peek.active && peek.phone == "+447400123456")
            #expect(try client.get("/v1/cooldowns/07400123456").errorCode == "invalid_phone")
            #expect(try client.delete("/v1/cooldowns/07400123456?region=GB").status == 204)
            #expect(try client.send(#"{"phone": "07400123456", "region": "GB"}"#).status == 200)
        }
    }

    @Test(arguments: ["XX", "G", "GBR", "1A", "", "ÉÉ", "G B", "uk"])
    func anythingButAKnownRegionCodeIsInvalidField(region: String) throws {
        try withRunningGate(region: "CN") { gate in
            let client = gate.client()
            let body = try String(decoding: JSONSerialization.data(withJSONObject: ["phone": "07400 123456", "region": region]), as: UTF8.self)
            let answer = try client.send(body)
            #expect(answer.status == 400 && answer.errorCode == "invalid_field", "\(region): \(answer)")
            let encoded = region.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            #expect(try client.get("/v1/cooldowns/07400123456?region=\(encoded)").errorCode == "invalid_field", "\(region)")
            #expect(try client.send(#"{"phone": "07400 123456", "region": 44}"#).errorCode == "invalid_field")
            #expect(try gate.redis.client().command("DBSIZE") == .integer(0))
        }
    }

    /// The picker chooses how to read the digits, not which regions may be sent to: a
    /// Chinese number picked as Chinese under `--allow-regions GB` is still refused.
    @Test func thePickedRegionNeverRelaxesAllowedRegions() throws {
        let policies = PolicySet(fallback: Policy(allowedRegions: ["GB"]))
        try withRunningGate(region: "GB", policies: policies) { gate in
            let client = gate.client()
            let pickedChinese = try client.send(#"{"phone": "13800138000", "region": "CN"}"#)
            #expect(pickedChinese.errorCode == "region_not_allowed", "\(pickedChinese)")
            let international = try client.send(#"{"phone": "+8613800138000", "region": "GB"}"#)
            #expect(international.errorCode == "region_not_allowed", "\(international)")
            let british = try client.send(#"{"phone": "07400123456", "region": "GB"}"#)
            #expect(british.status == 200, "\(british)")
            let keys = try gate.redis.client().command("KEYS", "rg:{*").array ?? []
            #expect(keys.count == 1, "\(keys)")
        }
    }
}
