import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15 on a Redis Cluster (part of `GateClusterTests`, so it runs serialized with it):
/// the lockout lives in the number's slot, on whichever master owns it; test numbers
/// touch no node at all.
extension GateClusterTests {
    @Test func wrongCodesLockNumbersOnEveryMasterAndTestNumbersTouchNothing() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 2, lockout: .seconds(600), lockoutScope: .number)
        let gate = try await Self.servedGate(cluster: cluster, policy: policy)
        let numbers = Self.spreadNumbers(6)
        for number in numbers {
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 1)
            let locked = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .failed) }
            #expect(locked?.code == "locked", "\(number)")
            #expect(try await gate.reserve(phone: number).reason == .locked, "\(number)")
            let refund = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
            #expect(refund?.code == "locked")
        }
        let configured = try GateConfiguration(
            redis: gate.configuration.redis, policies: PolicySet(fallback: policy), defaultRegion: "CN",
            testNumbers: try TestNumbers(parsing: "+8613800990000/4"))
        let withTestNumbers = Gate(configuration: configured)
        let before = try Self.keysOnMasters(cluster)
        for _ in 0..<3 {
            let decision = try await withTestNumbers.reserve(phone: "+8613800991234")
            #expect(decision.allowed && decision.testNumber)
            #expect(try await withTestNumbers.verify(phone: "+8613800991234", outcome: .failed).attemptsLeft == nil)
        }
        #expect(try Self.keysOnMasters(cluster) == before)
    }

    /// How many keys the masters hold together.
    static func keysOnMasters(_ cluster: RedisCluster) throws -> Int {
        try cluster.masters().reduce(0) { total, master in total + (try cluster.client(port: master.port).command("DBSIZE").integer ?? 0) }
    }
}
