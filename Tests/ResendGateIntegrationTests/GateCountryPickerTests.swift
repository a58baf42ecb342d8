import ResendGate
import ResendGateTestSupport
import Testing

/// The library's country picker: `region` on reserve, peek and release.
@Suite("Gate: a request's region against a real Redis")
struct GateCountryPickerTests {
    @Test func reservePeekAndReleaseReadANationalNumberInThePickedRegion() async throws {
        try await withLiveGate(region: "CN") { _, gate async throws in
            let decision = try await gate.reserve(phone: "07400 123456", region: "GB")
            #expect(decision.allowed && decision.phone.e164 == "+447400123456" && decision.phone.region == "GB")
            #expect(try await gate.peek(phone: "07400123456", region: "gb").active)
            #expect(try await gate.release(phone: "07400123456", region: "GB"))
            #expect(try await gate.reserve(phone: "+8613800138000", region: "GB").phone.e164 == "+8613800138000")
            let unknown = await gateError { () async throws(GateError) in try await gate.reserve(phone: "07400123456", region: "XX") }
            #expect(unknown?.code == "invalid_field")
            #expect(try Gate.requestRegion("gb") == "GB")
        }
    }
}
