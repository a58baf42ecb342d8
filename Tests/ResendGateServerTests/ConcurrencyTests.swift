import Foundation
import ResendGateTestSupport
import Testing

/// Many clients racing for one number: the reservation is atomic in Redis, so exactly
/// one wins, however the requests spread over workers and connections.
@Suite("Concurrent sends", .ownThread)
struct ConcurrencyTests {
    @Test func twoHundredConcurrentSendsForOneNumberAllowExactlyOne() throws {
        try withRunningGate(workers: 4, redisTimeout: .seconds(5)) { gate in
            let client = gate.client()
            let count = 200
            // Open every connection first, then send every request, then read: all 200
            // requests are on the wire before the first answer is read.
            let connections = try (0..<count).map { _ in try RawHTTPConnection(port: gate.port) }
            let spellings = ["+8613800138000", "+86 138 0013 8000", "008613800138000", "13800138000"]
            for (index, connection) in connections.enumerated() {
                let body = Array(#"{"phone": "\#(spellings[index % spellings.count])", "purpose": "login"}"#.utf8)
                try connection.write(client.requestBytes(
                    "POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: body))
            }
            var statuses: [Int: Int] = [:]
            var winners: [DecisionBody] = []
            for connection in connections {
                let response = try connection.readResponse()
                statuses[response.status, default: 0] += 1
                let decision = try response.decode(DecisionBody.self)
                #expect(decision.phone == "+8613800138000")
                if response.status == 200 {
                    winners.append(decision)
                } else {
                    #expect(decision.reason == "cooldown")
                    #expect(response.header("Retry-After") == "\(decision.retry_after)")
                }
            }
            #expect(statuses == [200: 1, 429: count - 1])
            #expect(winners.first?.retry_after_ms == 60_000)
            let metrics = try PrometheusSamples(try gate.client().get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 1)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="cooldown""#) == Double(count - 1))
        }
    }
}
