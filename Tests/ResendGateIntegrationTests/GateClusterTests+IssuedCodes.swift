import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 35 on a Redis Cluster (part of `GateClusterTests`, so it runs serialized with it):
/// a number's code lives in its slot, on whichever master owns it, and its send, its code
/// and its check are each one call there, the plain send and the scripted one alike.
extension GateClusterTests {
    @Test func issuedCodesOnEveryMaster() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 2, codes: IssuedCodes())
        let served = try await Self.servedGate(cluster: cluster, policy: .default)
        let gate = Gate(configuration: try GateConfiguration(
            redis: served.configuration.redis, policies: PolicySet(fallback: policy), defaultRegion: "CN",
            codeSecret: GateIssuedCodeTests.secret))
        for (index, number) in Self.spreadNumbers(6).enumerated() {
            // Half through the plain send, half through the reserve script (an Idempotency-Key).
            let key = index.isMultiple(of: 2) ? nil : "cluster-\(index)"
            let sent = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
                try await gate.reserve(phone: number, idempotencyKey: key)
            }
            let code = try #require(sent.issuedCode?.code, "\(number)")
            if let key {
                #expect(try await gate.reserve(phone: number, idempotencyKey: key).issuedCode?.code == code)
            }
            #expect(GateIssuedCodeTests.kind(await GateIssuedCodeTests.check(gate, GateIssuedCodeTests.wrong(code), phone: number)) == .wrongCode)
            #expect((try? await GateIssuedCodeTests.check(gate, code, phone: number).get()) != nil, "\(number)")
            #expect(GateIssuedCodeTests.kind(await GateIssuedCodeTests.check(gate, code, phone: number)) == .codeUsed)
            #expect(try await gate.release(phone: number))
        }
    }
}
