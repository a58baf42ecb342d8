import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 3 on a Redis Cluster (part of `GateClusterTests`, so it runs serialized
/// with it): a prefix's counts, a number's trust and the registry live in slots of their
/// own, on whichever masters own them, and the guard holds all the same.
extension GateClusterTests {
    @Test func aPumpingAttackIsBlockedAcrossTheMasters() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let gate = try await Self.servedGate(cluster: cluster, policy: PumpingAttack.policy)
        let outcome = try await PumpingAttack.run(on: gate)
        PumpingAttack.expectBlockedWithinMinVolume(outcome)
        #expect(outcome.normalAllowed == 4 * 30)

        // The keys are spread: the prefixes' hashes are not all on one master.
        let prefixKeys = ([PumpingAttack.attackedPrefix] + PumpingAttack.normalPrefixes).map { "rg:pump:{default:\($0)}" }
        let owners = try Set(prefixKeys.map { key in try cluster.client(forKey: key).endpoint })
        #expect(owners.count > 1, "\(owners)")

        let blocked = try await gate.blockedPrefixes()
        #expect(blocked.map(\.prefix.text) == [PumpingAttack.attackedPrefix])
        #expect(blocked.first.map { $0.sends == 20 && $0.verifications == 1 } == true)

        // The trusted number is let through once its own cooldown ran out (on its master).
        #expect(try await gate.reserve(phone: PumpingAttack.attacked(500)).reason == .suspectedPumping)
        let trustedCooldown = cooldownKey(PumpingAttack.trustedNumber)
        let numberNode = try cluster.client(forKey: trustedCooldown)
        let left = try #require(try numberNode.command("PTTL", trustedCooldown).integer)
        try numberNode.advanceTime(byMilliseconds: left, keys: trustedCooldown)
        #expect(try await gate.reserve(phone: PumpingAttack.trustedNumber).allowed)

        // The window passing on the prefix's master frees it.
        let attackedKey = "rg:pump:{default:\(PumpingAttack.attackedPrefix)}"
        try cluster.client(forKey: attackedKey).advanceTime(byMilliseconds: 3_600_000, keys: attackedKey)
        #expect(try await gate.reserve(phone: PumpingAttack.attacked(501)).allowed)
        #expect(try await gate.blockedPrefixes().isEmpty)

        // Fifty concurrent sends to a fresh prefix get exactly its volume through.
        let decisions = await withTaskGroup(of: Decision?.self) { group in
            for index in 0..<50 { group.addTask { try? await gate.reserve(phone: "+861380\(String(format: "%07d", index))") } }
            return await group.reduce(into: [Decision?]()) { $0.append($1) }
        }
        #expect(decisions.compactMap { $0 }.count == 50)
        #expect(decisions.filter { $0?.allowed == true }.count == 20)
    }
}

extension GateClusterTests {
    /// Observe mode on a cluster: the attack goes through, the sends the guard would have
    /// refused say so, and the prefix's master still counts every one.
    @Test func aPumpingAttackInObserveModeGoesThroughAcrossTheMasters() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let gate = try await Self.servedGate(cluster: cluster, policy: PumpingAttack.observingPolicy)
        let outcome = try await PumpingAttack.run(on: gate)
        PumpingAttack.expectObserved(outcome, listed: try await gate.blockedPrefixes())
    }
}
