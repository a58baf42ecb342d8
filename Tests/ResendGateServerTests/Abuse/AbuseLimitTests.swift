import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// Issue 36, item 1 over HTTP: limits added by configuration alone, `--limit` flags of
/// `resendgate serve` and a policy file's `limits`, answered, observed and counted in
/// `/metrics`, against pipelined sends and refunds.
@Suite("Abuse: limits written as data over HTTP", .ownThread)
struct AbuseLimitTests {
    @Test func twoLimitsAddedByFlagsAloneAreAnsweredAndCounted() throws {
        let arguments = [
            "--workers", "2", "--purposes", "login", "--max-refunds", "100",
            "--limit", "login-day,per=purpose,sends=3/24h", "--limit", "ip-number,per=ip+number,sends=2/1h",
        ]
        try TestGate.with({ try TestGate(serve: arguments) }) { gate in
            let client = gate.client()
            // A per-purpose daily cap: three sends of `login` to any numbers, `default` apart.
            for index in 0..<5 {
                let answer = try client.send(phone: "+86138001380\(10 + index)", purpose: "login")
                if index < 3 { #expect(answer.status == 200, "\(answer)") } else {
                    try Abuse.expectLimited(answer, "global_limit", waits: 86_000...86_400, policy: "\"global_limit\";q=3")
                }
            }
            // Per client IP and number: sends and refunds do not reset it.
            let body = #"{"phone": "\#(Abuse.number)", "client_ip": "203.0.113.8"}"#
            var allowed = 0
            for _ in 0..<5 {
                let answer = try client.send(body)
                if answer.status == 200 { allowed += 1 } else {
                    try Abuse.expectLimited(answer, "ip_limit", waits: 3_500...3_600, policy: "\"ip_limit\";q=2")
                }
                _ = try client.delete("/v1/cooldowns/\(Abuse.encoded)")
            }
            #expect(allowed == 2)
            let metrics = try client.get("/metrics").text
            #expect(metrics.contains("resendgate_decisions_total{outcome=\"denied\",reason=\"global_limit\"} 2"), "\(metrics)")
            #expect(metrics.contains("resendgate_decisions_total{outcome=\"denied\",reason=\"ip_limit\"} 3"), "\(metrics)")
        }
    }

    @Test func aPolicyFilesLimitHoldsAgainstPipelinedSendAndRefundPairs() throws {
        let file = #"{"default": {"max_refunds": 100, "limits": {"ip-number": {"per": "ip+number", "sends": "4/1h"}}}}"#
        let policies = try PolicySet.parse(json: Data(file.utf8), base: Policy(ladder: [.seconds(60)]))
        try withRunningGate(apiKeys: ["\(Abuse.releaseKey) send,read,release"], policies: policies) { gate in
            let body = #"{"phone": "\#(Abuse.number)", "client_ip": "203.0.113.9"}"#
            let answers = try Abuse.pipeline(gate, apiKey: Abuse.releaseKey, (0..<20).flatMap { _ in [Abuse.post(body), Abuse.delete] })
            let sends = stride(from: 0, to: answers.count, by: 2).map { answers[$0] }
            #expect(sends.filter { $0.status == 200 }.count == 4, "\(sends.map(\.status))")
            for refused in sends.dropFirst(4) { try Abuse.expectLimited(refused, "ip_limit", waits: 3_500...3_600) }
        }
    }
}
