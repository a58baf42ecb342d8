import Foundation
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// `resendgate serve --test-numbers`: the answer says `test_number`, nothing reaches Redis,
/// `/metrics` counts them apart; a malformed list stops the server at start.
@Suite("Test numbers over HTTP", .ownThread)
struct TestNumbersRouteTests {
    @Test func aTestNumberIsAllowedEveryTimeAndRecordsNothing() throws {
        let gate = try TestGate(serve: [
            "--workers", "1", "--log-level", "off", "--max-sends", "1", "--window", "1h", "--test-numbers", "+15005550006",
        ])
        defer { gate.stop(grace: .seconds(2)) }
        let client = gate.client()
        for _ in 0..<3 {
            let answer = try client.send(#"{"phone": "+1 (500) 555-0006", "client_ip": "203.0.113.7"}"#)
            #expect(answer.status == 200, "\(answer)")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
            #expect(body["test_number"] as? Bool == true && body["allowed"] as? Bool == true)
            #expect(body["countdown_token"] == nil)
        }
        #expect(try gate.redis.client().command("DBSIZE") == .integer(0))
        // Another number: the limits hold, and its answer carries no test_number.
        let real = try client.send(phone: "+8613800138000")
        #expect(real.status == 200 && !String(decoding: real.body, as: UTF8.self).contains("test_number"))
        #expect(try client.send(phone: "+8613800138000").status == 429)
        let metrics = try PrometheusSamples(try client.get("/metrics").text)
        #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="test_number""#) == 3)
        #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 1)
    }

    @Test func aMalformedListStopsTheServerNamingTheOption() throws {
        let result = try CommandRunner.run(try BuiltProducts.executable(named: "resendgate"), [
            "serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--test-numbers", "+15005550006,5550007",
        ], timeout: .seconds(20))
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("--test-numbers") && result.stderr.contains("5550007"), "\(result.stderr)")
    }
}
