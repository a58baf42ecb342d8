import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

@Suite("RedisCluster.slot(forKey:): Redis's CRC16 hash slots")
struct RedisClusterSlotTests {
    @Test func knownSlots() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        #expect(RedisCluster.slot(forKey: "foo") == 12182)
        #expect(RedisCluster.slot(forKey: "bar") == 5061)
        #expect(RedisCluster.slot(forKey: "hello") == 866)
        #expect(RedisCluster.slot(forKey: "123456789") == 0x31C3 & 0x3FFF)  // the CRC16-XMODEM check value
    }

    @Test func hashTags() {
        #expect(RedisCluster.slot(forKey: "{user1000}.following") == RedisCluster.slot(forKey: "{user1000}.followers"))
        #expect(RedisCluster.slot(forKey: "{user1000}.following") == RedisCluster.slot(forKey: "user1000"))
        #expect(RedisCluster.slot(forKey: "foo{}{bar}") == RedisCluster.slot(forKey: "foo{}{bar}"))  // empty tag: whole key
        #expect(RedisCluster.slot(forKey: "foo{}{bar}") != RedisCluster.slot(forKey: "bar"))
        #expect(RedisCluster.slot(forKey: "foo{{bar}}zap") == RedisCluster.slot(forKey: "{bar"))
        #expect(RedisCluster.slot(forKey: "foo{bar}{zap}") == RedisCluster.slot(forKey: "bar"))
        #expect(
            RedisCluster.slot(forKey: gateKey(.cooldown, "+8613800138000", purpose: "login"))
                == RedisCluster.slot(forKey: gateKey(.window, "+8613800138000", purpose: "login")))
    }

    @Test func hashTagForSlotLandsThere() {
        for slot in [0, 1, 5460, 5461, 12182, 16383] {
            #expect(RedisCluster.slot(forKey: "{\(RedisCluster.hashTag(forSlot: slot))}:x") == slot)
        }
    }
}

/// Each test starts its own cluster or Sentinel set (6 or 5 processes); serialized so that a
/// 2-CPU machine does not starve nodes whose failure detector trips after 1 s.
@Suite("RedisCluster and RedisSentinelSet: real multi-node Redis for tests", .serialized, .ownThread)
struct RedisClusterSupportTests {
    @Test(.timeLimit(.minutes(1))) func clusterComesUpWithEverySlotServed() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        #expect(cluster.seeds.count == 6)
        #expect(cluster.seedList == cluster.seeds.joined(separator: ","))
        let masters = try cluster.masters()
        let replicas = try cluster.replicas()
        #expect(masters.count == 3)
        #expect(replicas.count == 3)
        #expect(Set(replicas.compactMap(\.masterNodeID)) == Set(masters.map(\.nodeID)))
        #expect(masters.flatMap(\.slots).reduce(0) { $0 + $1.count } == 16_384)
        for port in cluster.ports {
            let info = try #require(try cluster.client(port: port).command("CLUSTER", "INFO").string)
            #expect(info.contains("cluster_state:ok"))
            #expect(info.contains("cluster_slots_ok:16384"))
        }

        // Our slot function agrees with Redis's, and masterPort(forSlot:) with the node's answer.
        let any = try cluster.client(port: cluster.ports[0])
        for key in ["foo", gateKey(.cooldown, "+8613800138000", purpose: "login"), ipSendsKey("203.0.113.7"), "a{b}c", "{}x", "日本"] {
            let slot = cluster.slot(forKey: key)
            #expect(try any.command("CLUSTER", "KEYSLOT", key) == .integer(slot), "\(key)")
            let owner = try cluster.client(port: cluster.masterPort(forSlot: slot))
            #expect(try owner.command("SET", key, "v") == .simpleString("OK"))
            #expect(try cluster.client(forKey: key).command("GET", key) == .bulkString("v"))
        }
        // A node that does not own a key redirects with MOVED to the owner.
        let key = "foo"
        let owner = try cluster.masterPort(forSlot: cluster.slot(forKey: key))
        let other = try #require(masters.first { $0.port != owner })
        #expect(try cluster.client(port: other.port).command("GET", key) == .error("MOVED 12182 127.0.0.1:\(owner)"))
        // The directory goes away with stop().
        let directory = cluster.directory
        cluster.stop()
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(!LoopbackPort.isAccepting(owner))
    }

    @Test(.timeLimit(.minutes(1))) func killedMasterIsReplacedAndKeepsWhatWAITConfirmed() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let key = gateKey(.cooldown, "+8613800138000", purpose: "login")
        let oldMaster = try cluster.masterPort(forSlot: cluster.slot(forKey: key))
        let replica = try #require(try cluster.replicas(ofMaster: oldMaster).first)
        let master = try cluster.client(port: oldMaster)
        #expect(try master.command("SET", key, "token", "PX", "600000") == .simpleString("OK"))
        #expect(try master.command("WAIT", "1", "2000") == .integer(1))

        let killedAt = StallWatch.mark()
        cluster.kill(port: oldMaster)
        #expect(!cluster.isRunning(port: oldMaster))
        let newMaster = try cluster.waitForFailover(of: oldMaster, timeout: .seconds(15))
        // Seen by polls in this process's running time: a frozen test process sees it late.
        let took = StallWatch.shared.ran(since: killedAt)
        #expect(newMaster == replica.port)
        #expect(took < .seconds(10), "failover took \(took) unstalled")
        #expect(try cluster.masterPort(forSlot: cluster.slot(forKey: key)) == newMaster)
        let promoted = try cluster.client(port: newMaster)
        #expect(try promoted.command("GET", key) == .bulkString("token"))
        let pttl = try #require(try promoted.command("PTTL", key).integer)
        #expect((500_000...600_000).contains(pttl))
        #expect(try cluster.masters().map(\.port).contains(newMaster))

        // The old master comes back as a replica of the one that replaced it.
        try cluster.restart(port: oldMaster)
        // It learns the new configuration from the others' gossip: polled, in this process's
        // running time (a loaded machine saw it as a master just after its restart).
        let learned = PatientDeadline(.seconds(15))
        var back = try #require(try cluster.topology().first { $0.port == oldMaster })
        while back.isMaster, learned.hasTimeLeft {
            usleep(100_000)
            back = try #require(try cluster.topology().first { $0.port == oldMaster })
        }
        #expect(!back.isMaster)
        #expect(back.masterNodeID == replica.nodeID)
    }

    @Test(.timeLimit(.minutes(1))) func migrateSlotMovesItsKeysAndRedirects() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let tag = "{login:+8613800138000}"
        let slot = cluster.slot(forKey: tag)
        let source = try cluster.masterPort(forSlot: slot)
        let target = try #require(try cluster.masters().first { $0.port != source }).port
        let sourceClient = try cluster.client(port: source)
        let keys = (0..<250).map { "rg:\(tag):k\($0)" }
        for key in keys { try sourceClient.command("SET", key, key, "PX", "600000") }

        var steps: [RedisCluster.MigrationStep] = []
        var sawAsk = false
        let moved = try cluster.migrateSlot(slot, from: source, to: target, batchSize: 100) { step in
            steps.append(step)
            if case .moved(let batch) = step, steps.count == 3 {
                // Half moved: the source sends clients for a migrated key to the target with ASK,
                // and the target answers it after ASKING.
                let reply = try cluster.client(port: source).command("GET", batch[0])
                sawAsk = reply == .error("ASK \(slot) 127.0.0.1:\(target)")
                let targetClient = try cluster.client(port: target)
                #expect(try targetClient.command("ASKING") == .simpleString("OK"))
                #expect(try targetClient.command("GET", batch[0]) == .bulkString(batch[0]))
            }
        }
        #expect(moved == 250)
        #expect(sawAsk)
        #expect(steps.first == .importing)
        #expect(steps.dropFirst().first == .migrating)
        #expect(steps.last == .assigned)
        #expect(steps.filter { if case .moved = $0 { true } else { false } }.count == 3)
        #expect(try cluster.masterPort(forSlot: slot) == target)
        #expect(try sourceClient.command("CLUSTER", "COUNTKEYSINSLOT", "\(slot)") == .integer(0))
        #expect(try cluster.client(port: target).command("CLUSTER", "COUNTKEYSINSLOT", "\(slot)") == .integer(250))
        #expect(try sourceClient.command("GET", keys[0]) == .error("MOVED \(slot) 127.0.0.1:\(target)"))
        let pttl = try #require(try cluster.client(port: target).command("PTTL", keys[249]).integer)
        #expect(pttl > 500_000)  // MIGRATE keeps the TTL
        for port in cluster.ports {
            #expect(try cluster.client(port: port).command("CLUSTER", "INFO").string?.contains("cluster_state:ok") == true)
        }
    }

    @Test(.timeLimit(.minutes(1))) func sentinelFailoverPromotesTheReplica() throws {
        let set = try RedisSentinelSet()
        defer { set.stop() }
        #expect(set.sentinels.count == 3)
        #expect(set.sentinelList == set.sentinels.joined(separator: ","))
        #expect(set.masterName == "resendgate")
        let oldMaster = set.masterPort
        #expect(Set(set.sentinelsMasterPorts().values) == [oldMaster])
        let master = try set.masterClient()
        #expect(try master.command("SET", "k", "v") == .simpleString("OK"))
        #expect(try master.command("WAIT", "1", "2000") == .integer(1))

        let killedAt = StallWatch.mark()
        #expect(set.killMaster() == oldMaster)
        let newMaster = try set.waitForFailover(timeout: .seconds(20))
        // Seen by polls in this process's running time: a frozen test process sees it late.
        let took = StallWatch.shared.ran(since: killedAt)
        #expect(newMaster == set.replicaPorts[0])
        #expect(set.masterPort == newMaster)
        #expect(took < .seconds(15), "failover took \(took) unstalled")
        #expect(Set(set.sentinelsMasterPorts().values) == [newMaster])
        let promoted = try set.masterClient()
        #expect(try promoted.command("GET", "k") == .bulkString("v"))
        #expect(try promoted.command("SET", "k2", "v2") == .simpleString("OK"))

        let directory = set.directory
        set.stop()
        #expect(!FileManager.default.fileExists(atPath: directory))
    }
}
