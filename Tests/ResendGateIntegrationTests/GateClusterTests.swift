import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateTestSupport
import Synchronization
import Testing

/// The gate on a real Redis Cluster (3 masters, 1 replica each) and behind Sentinels.
@Suite("Gate: Redis Cluster and Sentinel", .serialized, .ownThread)
struct GateClusterTests {
    static func gate(
        cluster: RedisCluster, waitReplicas: Int = 0, policy: Policy = .default, logger: GateLogger = .off
    ) throws -> Gate {
        let base = try RedisConfiguration(url: RedisConfiguration.defaultURL, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        let seeds = try RedisConfiguration.HostPort.parseList(cluster.seedList, field: "redis-cluster")
        return Gate(configuration: try GateConfiguration(
            redis: try .cluster(seeds: seeds, base: base), policies: PolicySet(fallback: policy), defaultRegion: "CN",
            waitReplicas: waitReplicas), logger: logger)
    }

    /// A gate on `cluster` once the cluster serves it (a peek is answered): a cluster just
    /// started may still be settling.
    static func servedGate(cluster: RedisCluster, policy: Policy) async throws -> Gate {
        let gate = try gate(cluster: cluster, policy: policy)
        _ = try await whenServed(within: .seconds(10)) { () async throws(GateError) in try await gate.peek(phone: "+8613800138000") }
        return gate
    }

    /// Numbers whose keys fall in `count` different slots spread over the whole range.
    static func spreadNumbers(_ count: Int) -> [String] {
        (0..<count).map { "+86139\(String(format: "%08d", $0 * 331_337 % 100_000_000))" }
    }

    /// Retries `body` (bounded) while the store is unavailable: the cluster is still
    /// settling or failing over. The limit is this process's running time: the gate's
    /// discovery runs in it, and a process frozen past the limit (CI) gets one more try
    /// only, before the gate's timers had run again.
    static func whenServed<T>(within limit: Duration, _ body: () async throws(GateError) -> T) async throws -> T {
        let start = StallWatch.mark()
        while true {
            let result: Result<T, GateError>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                if error.code != "store_unavailable" || StallWatch.shared.ran(since: start) >= limit { throw error }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func decisionsForThreeHundredNumbersOverEverySlotRange() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let gate = try Self.gate(cluster: cluster)
        let numbers = Self.spreadNumbers(300)
        var slotsByMaster: [Int: Int] = [:]
        var cipher: CountdownTokenCipher?
        for number in numbers {
            let first = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
                try await gate.reserve(phone: number)
            }
            #expect(first.allowed, "\(number)")
            let second = try await gate.reserve(phone: number)
            #expect(!second.allowed && second.reason == .cooldown, "\(number)")
            // The cooldown lives on the master that owns its slot.
            let key = gateKey(.cooldown, number)
            let owner = try cluster.masterPort(forSlot: cluster.slot(forKey: key))
            slotsByMaster[owner, default: 0] += 1
            // It holds the nonce its countdown token names (the secret, in its own slot, is
            // the one the first gate created).
            if cipher == nil {
                let secretOwner = try cluster.masterPort(forSlot: cluster.slot(forKey: tokenSecretKey))
                let secret = try #require(try cluster.client(port: secretOwner).command("GET", tokenSecretKey).string)
                cipher = CountdownTokenCipher(secret: Array(secret.utf8))
            }
            let named = cipher?.open(try #require(first.countdownToken))
            #expect(named?.number == number)
            let held = try cluster.client(port: owner).command("GET", key).string
            #expect(held.map { String($0.prefix(16)) } == named?.cooldownValue)
        }
        #expect(slotsByMaster.count == 3, "every master decides some numbers: \(slotsByMaster)")
        // Tokens are readable through the cluster too (one step: the token names the slot).
        let granted = StallWatch.mark()
        let decision = try await gate.reserve(phone: "+8613800138000")
        let token = try #require(decision.countdownToken)
        let reading = try #require(try await gate.countdown(token))
        // What remains by the time passed (Redis counts on while this process stands frozen).
        expectRemaining(reading.retryAfterMilliseconds, since: granted)
    }

    @Test func perIPCapAndIdempotencyWorkAcrossSlots() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let gate = try await Self.servedGate(cluster: cluster, policy: Policy(ipMaxSends: 2, ipWindow: .seconds(60)))
        let numbers = Self.spreadNumbers(4)
        #expect(try await gate.reserve(phone: numbers[0], clientIP: "203.0.113.7").allowed)
        #expect(try await gate.reserve(phone: numbers[1], clientIP: "203.0.113.7").allowed)
        let third = try await gate.reserve(phone: numbers[2], clientIP: "203.0.113.7")
        #expect(!third.allowed && third.reason == .ipLimit)
        // A number refused by its cooldown gives its IP share back.
        #expect(try await gate.reserve(phone: numbers[3], clientIP: "198.51.100.1").allowed)
        #expect(try await gate.reserve(phone: numbers[3], clientIP: "198.51.100.1").reason == .cooldown)
        let ipKey = ipSendsKey("198.51.100.1")
        #expect(try cluster.client(forKey: ipKey).command("ZCARD", ipKey) == .integer(1))

        let first = try await gate.reserve(phone: "+8613800138001", idempotencyKey: "k-1")
        let replay = try await gate.reserve(phone: "+8613800138001", idempotencyKey: "k-1")
        #expect(first.allowed && replay.replayed && replay.countdownToken == first.countdownToken)
        let reused = await gateError { () async throws(GateError) in
            try await gate.reserve(phone: "+8613800138002", idempotencyKey: "k-1")
        }
        #expect(reused == .idempotencyKeyReused)
        // Keys are scoped to the caller: another caller's "k-1" is its own record, in its own slot.
        let other = try await gate.reserve(phone: "+8613800138002", idempotencyKey: "k-1", caller: "caller-b")
        #expect(other.allowed && !other.replayed)
        let otherReplay = try await gate.reserve(phone: "+8613800138002", idempotencyKey: "k-1", caller: "caller-b")
        #expect(otherReplay.replayed && otherReplay.countdownToken == other.countdownToken)
        let firstAgain = try await gate.reserve(phone: "+8613800138001", idempotencyKey: "k-1")
        #expect(firstAgain.replayed && firstAgain.countdownToken == first.countdownToken)
        // A purpose the gate is not configured for is refused before any slot is asked.
        let madeUp = await gateError { () async throws(GateError) in
            try await gate.reserve(phone: "+8613800138003", purpose: "made-up", idempotencyKey: "k-2")
        }
        #expect(madeUp?.kind == .invalidPurpose)
    }

    @Test func killingAMasterKeepsItsCooldownsAndServesNewNumbersWithinTenSeconds() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        // Reservations wait for their replica (WAIT 1), so a failover cannot forget them.
        // After the kill the promoted replica has no replica of its own, so a gate that
        // insists on one answers 503 (never allowed); the checks after it use a second
        // gate that does not wait.
        let durable = try Self.gate(cluster: cluster, waitReplicas: 1)
        let gate = try Self.gate(cluster: cluster)
        let numbers = Self.spreadNumbers(30)
        for number in numbers {
            let decision = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
                try await durable.reserve(phone: number)
            }
            if !decision.allowed {
                // An earlier try reached the master, but its replica acknowledged too late: that
                // try was answered 503 (never allowed, as the contract says), and this one meets
                // the cooldown it started. Make sure the replica has it before the kill.
                #expect(decision.reason == .cooldown, "\(number): \(decision)")
                let key = gateKey(.cooldown, number)
                #expect(try cluster.client(forKey: key).command("WAIT", "1", "5000") == .integer(1))
            }
        }
        _ = try await gate.peek(phone: numbers[0])
        let victim = try cluster.masterPort(forSlot: cluster.slot(forKey: gateKey(.cooldown, numbers[0])))
        let onVictim = try numbers.filter {
            try cluster.masterPort(forSlot: cluster.slot(forKey: gateKey(.cooldown, $0))) == victim
        }
        cluster.kill(port: victim)
        let killed = StallWatch.mark()
        // A new number on the dead master's slots is served once the replica takes over.
        let fresh = try #require(Self.spreadNumbers(400).dropFirst(30).first {
            try cluster.slot(forKey: gateKey(.cooldown, $0)) == cluster.slot(forKey: gateKey(.cooldown, onVictim[0]))
                || cluster.masterPort(forSlot: cluster.slot(forKey: gateKey(.cooldown, $0))) == victim
        })
        let newDecision = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
            try await gate.reserve(phone: fresh)
        }
        // In this process's running time (a frozen test process saw the failover late).
        let served = StallWatch.shared.ran(since: killed)
        #expect(newDecision.allowed)
        #expect(served < .seconds(10), "served again after \(served) unstalled, \(ContinuousClock.now - killed) in all")
        // The promoted replica still enforces every cooldown it received before the kill.
        for number in onVictim {
            let again = try await gate.reserve(phone: number)
            #expect(!again.allowed && again.reason == .cooldown, "\(number) after failover")
        }
    }

    @Test func aSlotMigratedDuringLoadLosesNoDecision() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let log = LogCapture()
        let gate = try Self.gate(cluster: cluster, logger: log.logger(.info))
        // Twenty numbers whose keys share one slot (searched for: about one in 16 384
        // numbers lands in a given slot): the slot to move.
        let slot = cluster.slot(forKey: gateKey(.cooldown, "+8613800138000"))
        var sample: [String] = []
        var candidate = 0
        while sample.count < 20 && candidate < 3_000_000 {
            let number = "+86138\(String(format: "%08d", candidate))"
            if cluster.slot(forKey: gateKey(.cooldown, number)) == slot { sample.append(number) }
            candidate += 1
        }
        #expect(sample.count == 20)
        let source = try cluster.masterPort(forSlot: slot)
        let target = try #require(try cluster.masters().map(\.port).first { $0 != source })
        _ = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in try await gate.peek(phone: sample[0]) }

        // Half the numbers are reserved before the move; all are asked twice during it.
        for number in sample.prefix(sample.count / 2) { #expect(try await gate.reserve(phone: number).allowed) }
        let finished = Mutex(false)
        let migration = Task.detached {
            defer { finished.withLock { $0 = true } }
            try cluster.migrateSlot(slot, from: source, to: target, batchSize: 2, pause: .milliseconds(30))
        }
        // Every number is asked again and again for as long as the slot is half moved
        // (the gate meets ASK, then MOVED), and twice more after.
        var allowed: [String: Int] = [:]
        var rounds = 0
        var roundsAfter = 0
        while roundsAfter < 2 {
            if finished.withLock({ $0 }) { roundsAfter += 1 }
            for number in sample {
                let decision = try await gate.reserve(phone: number)
                if decision.allowed { allowed[number, default: 0] += 1 }
            }
            rounds += 1
        }
        _ = try await migration.value
        #expect(rounds >= 4, "the load ran during the move")
        // Before the move: none allowed again. The rest: exactly one allowed each.
        for number in sample.prefix(sample.count / 2) { #expect(allowed[number] == nil, "\(number) allowed twice") }
        for number in sample.dropFirst(sample.count / 2) { #expect(allowed[number] == 1, "\(number): \(allowed[number] ?? 0)") }
        #expect(try cluster.masterPort(forSlot: slot) == target)
        for number in sample { #expect(try await gate.reserve(phone: number).reason == .cooldown) }
        // The re-map reached the caller's logger (MOVED, then the map read again), with no number.
        let remapped = try await poll(every: .milliseconds(50), upTo: .seconds(3)) {
            log.lines(at: .info).first { $0.contains("slot map read") && !$0.contains(" 0 slots changed") }
        }
        #expect(remapped != nil, "\(log.all)")
        #expect(!log.all.contains { $0.contains("+86") }, "\(log.all)")
    }

    @Test func sentinelFailoverKeepsCooldownsAndServesAgain() async throws {
        let sentinels = try RedisSentinelSet()
        defer { sentinels.stop() }
        let base = try RedisConfiguration(url: RedisConfiguration.defaultURL, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        let log = LogCapture()
        func sentinelGate(waitReplicas: Int, logger: GateLogger = .off) throws -> Gate {
            Gate(configuration: try GateConfiguration(
                redis: .sentinel(
                    sentinels: try RedisConfiguration.HostPort.parseList(sentinels.sentinelList, field: "redis-sentinel"),
                    master: sentinels.masterName, base: base),
                defaultRegion: "CN", waitReplicas: waitReplicas), logger: logger)
        }
        // As with the cluster: the first reservation waits for the replica; after the
        // failover the new master has none, so the checks use a gate that does not wait.
        let durable = try sentinelGate(waitReplicas: 1)
        let gate = try sentinelGate(waitReplicas: 0, logger: log.logger(.info))
        let first = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
            try await durable.reserve(phone: "+8613800138000")
        }
        // Connected to the old master before it goes (it was made a moment ago; a loaded
        // machine may not have connected it yet).
        _ = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
            try await gate.peek(phone: "+8613800138000")
        }
        #expect(first.allowed)
        let oldMaster = sentinels.killMaster()
        let killed = StallWatch.mark()
        let fresh = try await Self.whenServed(within: .seconds(20)) { () async throws(GateError) in
            try await gate.reserve(phone: "+8613800138001")
        }
        #expect(fresh.allowed)
        #expect(StallWatch.shared.ran(since: killed) < .seconds(20), "in this process's running time")
        let again = try await gate.reserve(phone: "+8613800138000")
        #expect(!again.allowed && again.reason == .cooldown, "the new master kept the cooldown")
        // The switch reached the caller's logger as a warning naming the old master.
        let switched = log.lines(at: .warning).filter { $0.contains("the Sentinels switched it from") }
        #expect(switched.contains { $0.contains(":\(oldMaster) to ") }, "\(log.all)")
        #expect(log.lines(at: .warning).contains { $0.contains("connection lost") }, "\(log.all)")
    }

    @Test func twoGatesOnOneRedisShareCooldowns() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let a = try makeGate(url: redis.url)
        let b = try makeGate(url: redis.url)
        #expect(try await a.reserve(phone: "+8613800138000").allowed)
        let fromB = try await b.reserve(phone: "008613800138000")
        #expect(!fromB.allowed && fromB.reason == .cooldown)
        #expect(try await b.release(phone: "+8613800138000"))
        #expect(try await a.reserve(phone: "13800138000").allowed)
    }
}
