import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Releases reach open event streams on a Redis Cluster and behind Sentinels too. On a
/// cluster the release script's `PUBLISH` runs on the number's master and the cluster
/// bus carries it to every node, so a gate subscribed on any node hears it. Heavy (six
/// Redis nodes; a failover): run it alone, with `--no-parallel`.
@Suite("Streams end on release: Redis Cluster and Sentinel", .serialized, .ownThread)
struct StreamReleaseClusterTests {
    /// Gate B's workers subscribe on the first seed; the number is chosen so that its
    /// master is another node and not the first seed's own master (a replica would get
    /// its master's publishes through replication): only the cluster bus can bring it.
    @Test func aReleaseOnOneMasterEndsStreamsSubscribedOnAnotherNode() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let firstSeed = cluster.ports[0]
        let masters = try cluster.masters()
        let firstSeedsMaster = try masters.first { $0.port == firstSeed }?.port
            ?? masters.first { master in try cluster.replicas(ofMaster: master.port).contains { $0.port == firstSeed } }?.port
        let phone = try #require((0..<100).map { "+861380013\(String(format: "%04d", $0))" }.first { number in
            let owner = try cluster.masterPort(forSlot: cluster.slot(forKey: gateKey(.cooldown, number)))
            return owner != firstSeed && owner != firstSeedsMaster
        })
        let gates = try ReleaseTestGates(count: 2, redis: ["--redis-cluster", cluster.seedList])
        defer { gates.stop() }
        let token = try gates.send(phone, on: 0)
        // On a cluster the token key is written after the answer (in its own slot), so
        // another gate may look it up a moment before it lands.
        try waitUntilTrue("the token is readable on gate B") {
            try ReleaseTestGates.request(port: gates.ports[1], "GET", "/v1/countdowns/\(token)").status == 200
        }
        let streams = try [1, 1, 1, 0].map { try gates.openStream(token, on: $0) }
        // Every worker that has a stream subscribed on the first seed, none on the owner.
        let subscribers = { (port: Int) throws -> Int in try releaseSubscribers(cluster.client(port: port)) }
        try waitUntilTrue("the workers subscribed on the first seed") { try subscribers(firstSeed) >= 2 }
        let owner = try cluster.masterPort(forSlot: cluster.slot(forKey: gateKey(.cooldown, phone)))
        #expect(try subscribers(owner) == 0)
        let releasing = StallWatch.mark()
        #expect(try gates.release(phone, on: 0) == 204)
        for stream in streams { try stream.expectReleased(since: releasing) }
        #expect(try ReleaseTestGates.request(port: gates.ports[1], "GET", "/v1/countdowns/\(token)").status == 404)
    }

    /// Behind Sentinels the subscriber follows the master they name: after the master is
    /// killed and a replica promoted, it subscribes at the new master (re-checking the
    /// stream, whose cooldown the replica has), and a release there still ends the stream.
    @Test func behindSentinelsTheSubscriptionFollowsAFailover() throws {
        let sentinels = try RedisSentinelSet()
        defer { sentinels.stop() }
        let gates = try ReleaseTestGates(
            count: 1, redis: ["--redis-sentinel", sentinels.sentinelList, "--sentinel-master", sentinels.masterName])
        defer { gates.stop() }
        let phone = "+8613800138000"
        let token = try gates.send(phone, on: 0)
        let stream = try gates.openStream(token, on: 0)
        let subscribers = { (port: Int) throws -> Int in try releaseSubscribers(sentinels.client(port: port)) }
        let oldMaster = sentinels.masterPort
        try waitUntilTrue("the worker subscribed at the master") { try subscribers(oldMaster) == 1 }
        try waitUntilTrue("the replica has the cooldown") {
            sentinels.replicaPorts.allSatisfy { port in
                (try? sentinels.client(port: port).command("DBSIZE").integer ?? 0) ?? 0 >= 2
            }
        }
        _ = sentinels.killMaster()
        let newMaster = try sentinels.waitForFailover()
        try waitUntilTrue("the worker subscribed at the new master", timeout: .seconds(20)) { try subscribers(newMaster) == 1 }
        try ReleaseTestGates.waitUntilReady(port: gates.ports[0])
        #expect(try stream.next()?.event == "tick")  // the cooldown survived the failover: not ended
        let releasing = StallWatch.mark()
        #expect(try gates.release(phone, on: 0) == 204)
        try stream.expectReleased(since: releasing)
    }
}
