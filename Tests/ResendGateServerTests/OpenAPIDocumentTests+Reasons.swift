import Foundation
import ResendGate
@testable import ResendGateServer
import Testing

/// The table of reasons (`DecisionReason`) is the one place a reason is added: every other
/// layer that names reasons has a row for each and no other.
extension OpenAPIDocumentTests {
    static let reasons = DecisionReason.allCases.map(\.rawValue)
    static let observable = DecisionReason.allCases.filter(\.row.observable).map(\.rawValue)

    @Test func everyLayerHasARowForEveryReasonAndNoOther() throws {
        // deploy/openapi.yaml: the decision's reason, and its observed rules.
        let document = try YAMLOutline(parsing: try Self.deployFile())
        let decision = "components/schemas/Decision/properties/"
        #expect(document.node(at: decision + "reason/enum")?.children.compactMap(\.value) == Self.reasons)
        #expect(document.node(at: decision + "observed/items/enum")?.children.compactMap(\.value) == Self.observable)
        // docs/API.md: its table of reasons is the table, row for row.
        let api = try Self.packageFile("docs/API.md")
        let table = "| reason | status | `q` in `RateLimit-Policy` | observe | when it refuses |\n|---|---|---|---|---|\n"
            + DecisionReason.allCases.map { reason in
                let row = reason.row
                return "| `\(reason.rawValue)` | \(APIError.status(of: reason)) | \(row.quota) | \(row.observable ? "yes" : "no") | \(row.summary) |\n"
            }.joined()
        let documented = api.contains(table + "\n")
        #expect(documented, "docs/API.md's table of reasons differs; it should read:\n\(table)")
        // docs/anti-abuse.md: the rules table answers each reason, and only those.
        let abuse = try Self.packageFile("docs/anti-abuse.md")
        let rules = try #require(abuse.range(of: "| rule | answer when it refuses |"))
        let rulesTable = String(abuse[rules.lowerBound...]).components(separatedBy: "\n\n")[0]
        let answered = rulesTable.matches(of: /"reason": "([a-z_]+)"/).map { String($0.output.1) }
        #expect(Set(answered) == Set(Self.reasons), "docs/anti-abuse.md's rules table answers \(Set(answered).sorted())")
        // The Swift kit (which cannot import the server's modules) names no reason the server
        // lacks; one it does not name yet (a newer server's) it keeps as the server's word.
        #expect(Set(KitReasons.known).isSubset(of: Self.reasons), "\(KitReasons.known)")
        // A status for each: a refusal, never 200.
        for reason in DecisionReason.allCases { #expect(APIError.status(of: reason) == 429, "\(reason)") }
        #expect(APIError.status(of: nil) == 200)
    }

    /// `/metrics` counts every reason's refusals and every observable one's would-be
    /// refusals under its own label, each apart from the others.
    @Test func metricsCountEveryReasonUnderItsOwnLabel() throws {
        let metrics = WorkerMetrics()
        let request = SendRequest(phone: try PhoneNumber(parsing: "+8613800138000"), purpose: .default)
        for (index, reason) in DecisionReason.allCases.enumerated() {
            let observed = DecisionReason.allCases.filter(\.row.observable).filter { $0 != reason }
            for _ in 0...index { metrics.record(Decision(request, refusedBy: reason, wait: 1, now: 0, observed: observed)) }
        }
        let samples = try PrometheusSamples(PrometheusText.render([metrics], redis: []))
        let count = DecisionReason.allCases.count
        for (index, reason) in DecisionReason.allCases.enumerated() {
            let label = #",reason="\#(reason.rawValue)""#
            #expect(samples.value("resendgate_decisions_total", #"outcome="denied""# + label) == Double(index + 1), "\(reason)")
            // Observed in every other reason's decisions: all of them but its own.
            let observed = (count * (count + 1)) / 2 - (index + 1)
            #expect(samples.value("resendgate_decisions_total", #"outcome="observed""# + label)
                    == (reason.row.observable ? Double(observed) : nil), "\(reason)")
        }
    }
}
