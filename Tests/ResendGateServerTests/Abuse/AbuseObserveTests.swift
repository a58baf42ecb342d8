import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// Issue 15, item 5 over HTTP for the number's own rules: `resendgate serve --observe
/// cooldown,ip_limit` lets repeats through, reported in the answer's `observed` and in
/// `/metrics`; `locked` cannot be observed, by flag or in a policy file.
@Suite("Abuse: observe mode for the cooldown and the IP's cap over HTTP", .ownThread)
struct AbuseObserveTests {
    @Test func observedRulesAreInTheAnswerAndInMetrics() throws {
        let arguments = ["--workers", "2", "--observe", "cooldown,ip_limit", "--ip-max-sends", "1", "--ip-window", "1h"]
        try TestGate.with({ try TestGate(serve: arguments) }) { gate in
            let body = #"{"phone": "\#(Abuse.number)", "client_ip": "203.0.113.9"}"#
            let first = try gate.client().send(body)
            #expect(first.status == 200, "\(first)")
            #expect(try Abuse.object(first)["observed"] == nil, "\(first)")
            // The same number from the same IP, three times more: the cooldown and the IP's
            // cap would each refuse; both are reported, and every send goes through.
            for _ in 0..<3 {
                let again = try gate.client().send(body)
                #expect(again.status == 200, "\(again)")
                #expect(try Abuse.object(again)["observed"] as? [String] == ["cooldown", "ip_limit"], "\(again)")
                #expect(again.text.contains(#""observed":["cooldown","ip_limit"]"#), "\(again.text)")
            }
            // Another number from another IP: nothing would refuse, nothing is reported.
            let other = try gate.client().send(#"{"phone": "+8613900139000", "client_ip": "198.51.100.1"}"#)
            #expect(other.status == 200)
            #expect(try Abuse.object(other)["observed"] == nil, "\(other)")
            let metrics = try PrometheusSamples(try gate.client().get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 5)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="observed",reason="cooldown""#) == 3)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="observed",reason="ip_limit""#) == 3)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="observed",reason="max_sends""#) == 0)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="cooldown""#) == 0)
            // The IP's set holds its cap, not the sends let through.
            #expect(try Abuse.count(ipSendsKey("203.0.113.9"), in: gate.redis) == 1)
        }
    }

    @Test func observingLockedStopsServeWithExit2() throws {
        let result = try CommandRunner.run(
            try BuiltProducts.executable(named: "resendgate"),
            ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--observe", "cooldown,locked"], timeout: .seconds(10))
        #expect(result.status == .exited(2), "\(result)")
        #expect(result.stderr.contains("observe"), "\(result.stderr)")
        #expect(result.stderr.contains("\"locked\" cannot be observed"), "\(result.stderr)")
    }

    @Test func aPolicyFileObservingLockedStopsServeNamingTheField() throws {
        let result = try PolicyFile.serve(#"{"purposes": {"login": {"observe": ["max_sends", "locked"]}}}"#)
        #expect(result.status == .exited(2), "\(result)")
        #expect(result.stderr.contains("purposes.login.observe"), "\(result.stderr)")
        #expect(result.stderr.contains("\"locked\" cannot be observed"), "\(result.stderr)")
    }
}
