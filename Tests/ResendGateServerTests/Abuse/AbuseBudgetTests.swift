import Dispatch
import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Synchronization
import Testing

/// Issue 15, items 4 and 5 over HTTP: `resendgate serve` with `--country-max-sends`,
/// `--max-sends-total` and `--observe`, against 50 senders on connections of their own.
@Suite("Abuse: send budgets and observe mode against concurrent senders", .ownThread)
struct AbuseBudgetTests {
    /// Sends `phones` at once, one connection each; the answers in their order.
    static func sendAtOnce(_ gate: TestGate, _ phones: [String]) -> [RawHTTPResponse?] {
        let answers = Mutex([RawHTTPResponse?](repeating: nil, count: phones.count))
        DispatchQueue.concurrentPerform(iterations: phones.count) { index in
            let answer = try? gate.client().send(phone: phones[index])
            answers.withLock { $0[index] = answer }
        }
        return answers.withLock { $0 }
    }

    @Test func budgetsHoldOverHTTPAndAnObservedOneIsReported() throws {
        let arguments = [
            "--workers", "2", "--country-max-sends", "CN=20/1h,+44=1000/1h", "--max-sends-total", "25/1h", "--observe", "global_limit",
        ]
        try TestGate.with({ try TestGate(serve: arguments) }) { gate in
            let chinese = (0..<50).map { "+86138\(String(format: "%08d", 30_000_000 + $0))" }
            let answers = Self.sendAtOnce(gate, chinese)
            #expect(answers.allSatisfy { $0 != nil })
            let responses = answers.compactMap { $0 }
            #expect(responses.filter { $0.status == 200 }.count == 20)
            let refused = responses.filter { $0.status != 200 }
            #expect(refused.count == 30)
            for response in refused {
                let body = try Abuse.expectLimited(response, "country_limit", waits: 3_591...3_600, policy: "\"country_limit\";q=20")
                #expect(body["observed"] == nil)
            }
            // The total budget (25) is observed: five more sends count, the rest go through reported.
            let british = (0..<10).map { "+4479111\(String(format: "%05d", 20_000 + $0))" }
            var observed = 0
            for phone in british {
                let response = try gate.client().send(phone: phone)
                #expect(response.status == 200, "\(response)")
                let body = try Abuse.object(response)
                if let rules = body["observed"] as? [String] {
                    #expect(rules == ["global_limit"])
                    observed += 1
                } else {
                    #expect(body["observed"] == nil)
                }
            }
            #expect(observed == 5)
            let metrics = try PrometheusSamples(try gate.client().get("/metrics").text)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="denied",reason="country_limit""#) == 30)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="observed",reason="global_limit""#) == 5)
            #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 30)
            // Nothing past the budgets was counted: 20 for China, 25 in total.
            let client = try gate.redis.client()
            func counted(_ pattern: String) throws -> Int {
                try (client.command("KEYS", pattern).array ?? []).compactMap(\.string).reduce(0) {
                    $0 + (try client.command("ZCARD", $1).integer ?? 0)
                }
            }
            #expect(try counted("rg:budget:{\\*:CN:*") == 20)
            // +447911120000... are Guernsey's (GG): the calling code's budget counts them.
            #expect(try counted("rg:budget:{\\*:+44:*") == 10)
            #expect(try counted("rg:budget:{\\*:total:*") == 25)
        }
    }

    /// A region's budget and its calling code's both count a send: the 429's quota is the
    /// one of the budget that was full, not the first one looked up.
    @Test func theQuotaNamedIsTheFullBudgets() throws {
        try TestGate.with({ try TestGate(serve: ["--country-max-sends", "CN=100/1h,+86=2/1h"]) }) { gate in
            let phones = (0..<3).map { "+86138\(String(format: "%08d", 40_000_000 + $0))" }
            for phone in phones.prefix(2) { #expect(try gate.client().send(phone: phone).status == 200) }
            let refused = try gate.client().send(phone: phones[2])
            #expect(refused.status == 429, "\(refused)")
            #expect(try Abuse.object(refused)["reason"] as? String == "country_limit")
            #expect(refused.header("RateLimit-Policy") == "\"country_limit\";q=2", "\(refused)")
        }
    }

    @Test(arguments: [
        (["--observe", "country_limit,pumping"], ["\"pumping\" is not a rule", "country_limit", "global_limit", "ip_limit"]),
        (["--country-max-sends", "XX=5/1h"], ["--country-max-sends", "\"XX\" is not a known region"]),
        (["--max-sends-total", "100000"], ["--max-sends-total", "sends/window"]),
    ] as [([String], [String])])
    func aBadBudgetOrRuleStopsServeWithExit2(arguments: [String], messages: [String]) throws {
        let result = try CommandRunner.run(
            try BuiltProducts.executable(named: "resendgate"), ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0"] + arguments,
            timeout: .seconds(10))
        #expect(result.status == .exited(2), "\(result)")
        for message in messages { #expect(result.stderr.contains(message), "\(result.stderr)") }
    }

    @Test func aBadPolicyFileBudgetStopsServeNamingTheField() throws {
        let result = try PolicyFile.serve(#"{"purposes": {"login": {"country_max_sends": {"CN": "0/24h"}, "observe": ["global_limit"]}}}"#)
        #expect(result.status == .exited(2), "\(result)")
        #expect(result.stderr.contains("purposes.login.country_max_sends.CN"), "\(result.stderr)")
        #expect(result.stderr.contains("1 to 10000000"), "\(result.stderr)")
    }
}
