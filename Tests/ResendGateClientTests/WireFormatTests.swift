import Countdown
import Foundation
import Testing
@testable import ResendGateClient

/// The kit reads a decision's optional members: `test_number` only when the server sends it.
struct WireFormatTests {
    static let receipt = ServerReceipt(arrivedAt: CountdownInstant(nanoseconds: 0), deviceTime: Date(), roundTrip: .zero)
    static let body = #"{"allowed":true,"phone":"+15005550006","purpose":"default","retry_after":60,"retry_after_ms":60000,"#
        + #""resend_at":"2026-12-01T18:06:01.508Z","server_time":"2026-12-01T18:05:01.508Z","next_retry_after":60,"sends_left":null"#

    @Test func aTestNumbersAnswerSaysSo() throws {
        let test = try WireFormat.decision(Data((Self.body + #","test_number":true}"#).utf8), status: 200, receipt: Self.receipt)
        #expect(test.allowed && test.testNumber && test.countdownToken == nil)
        let plain = try WireFormat.decision(Data((Self.body + "}").utf8), status: 200, receipt: Self.receipt)
        #expect(!plain.testNumber)
    }

    @Test func observedRulesAreReadAndAbsentMeansNone() throws {
        let observed = try WireFormat.decision(
            Data((Self.body + #","observed":["global_limit","country_limit"]}"#).utf8), status: 200, receipt: Self.receipt)
        #expect(observed.observed == [.globalLimit, .countryLimit])
        #expect(try WireFormat.decision(Data((Self.body + "}").utf8), status: 200, receipt: Self.receipt).observed.isEmpty)
    }
}
