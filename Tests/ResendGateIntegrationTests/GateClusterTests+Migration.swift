import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateTestSupport
import Synchronization
import Testing

/// A slot moving between masters under load, for a policy decided by a script.
extension GateClusterTests {
    /// One answered request: when it left and when its answer came (this process's clock).
    struct Answer: Sendable {
        let number: String
        let allowed: Bool
        let sent: ContinuousClock.Instant
        let received: ContinuousClock.Instant
    }

    /// What the clients of a test saw, and whether the move is over.
    final class MigrationRecord: Sendable {
        let answers = Mutex<[Answer]>([])
        let failures = Mutex<[String]>([])
        let finished = Mutex(false)
    }

    /// Numbers whose keys fall in the slot of `first`'s (about one in 16 384 numbers does).
    static func numbersSharingASlot(with first: String, count: Int) -> [String] {
        let slot = RedisCluster.slot(forKey: gateKey(.cooldown, first))
        var sample = [first]
        var candidate = 0
        while sample.count < count && candidate < 3_000_000 {
            let number = "+86138\(String(format: "%08d", candidate))"
            if number != first, RedisCluster.slot(forKey: gateKey(.cooldown, number)) == slot { sample.append(number) }
            candidate += 1
        }
        return sample
    }

    /// A slot holding running cooldowns moves while clients keep asking for its numbers, with
    /// a client address (so the per-IP cap makes the script decide): no request of them is
    /// refused as unavailable, and no number is allowed twice within its cooldown. (Before,
    /// the call named keys never written, and Redis answered TRYAGAIN for the whole move:
    /// 503 after half a second of retries.) The move takes well over the 1 s Redis timeout.
    @Test(.timeLimit(.minutes(2))) func migratingASlotRefusesNoNumberOfItAndAllowsNoneTwice() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let cooldown: Duration = .seconds(1)
        let gate = try await Self.servedGate(
            cluster: cluster, policy: Policy(ladder: [cooldown], ipMaxSends: 1_000_000, ipWindow: .seconds(60)))
        let sample = Self.numbersSharingASlot(with: "+8613800138000", count: 16)
        #expect(sample.count == 16)
        let slot = cluster.slot(forKey: gateKey(.cooldown, sample[0]))
        let source = try cluster.masterPort(forSlot: slot)
        let target = try #require(try cluster.masters().map(\.port).first { $0 != source })
        // Running cooldowns in the slot: three quarters of the numbers were just allowed.
        for number in sample.prefix(12) {
            #expect(try await gate.reserve(phone: number, clientIP: "198.51.100.9").allowed, "\(number)")
        }

        let record = MigrationRecord()
        let migration = Task.detached {
            defer { record.finished.withLock { $0 = true } }
            // Eight batches of two keys, 150 ms apart: the slot is half moved for over a second.
            try cluster.migrateSlot(slot, from: source, to: target, batchSize: 2, pause: .milliseconds(150))
        }
        // Four clients, each over every number of the slot again and again, until the move
        // is over and one round more.
        let clients = (0..<4).map { client in
            Task.detached {
                var roundsAfter = 0
                while roundsAfter < 2 {
                    if record.finished.withLock({ $0 }) { roundsAfter += 1 }
                    for number in sample {
                        let sent = ContinuousClock.now
                        do {
                            let decision = try await gate.reserve(phone: number, clientIP: "203.0.113.\(client)")
                            let answer = Answer(number: number, allowed: decision.allowed, sent: sent, received: .now)
                            record.answers.withLock { $0.append(answer) }
                        } catch {
                            record.failures.withLock { $0.append("\(number): \(error)") }
                        }
                    }
                }
            }
        }
        _ = try await migration.value
        for client in clients { await client.value }
        #expect(try cluster.masterPort(forSlot: slot) == target)

        let all = record.answers.withLock { $0 }
        let failures = record.failures.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.prefix(5)) of \(failures.count)")
        #expect(all.count >= 4 * sample.count * 3, "the load ran during the move: \(all.count) answers")
        // A double allow is proven when two allowed sends of one number, each decided within
        // its request's send-to-answer interval, are less than the cooldown apart however
        // placed in them: the later one's answer came less than a cooldown after the earlier
        // one's request left.
        var doubles: [String] = []
        for (number, sends) in Dictionary(grouping: all.filter(\.allowed), by: \.number) {
            let ordered = sends.sorted { $0.sent < $1.sent }
            for (earlier, later) in zip(ordered, ordered.dropFirst()) where later.received - earlier.sent < cooldown {
                doubles.append("\(number): \(later.received - earlier.sent)")
            }
        }
        #expect(doubles.isEmpty, "\(doubles)")
        // Numbers were allowed again during the move (their cooldowns ran out in it).
        #expect(all.filter(\.allowed).count >= sample.count, "\(all.filter(\.allowed).count) allowed")
    }

    /// Once a slot's keys have moved, and before the slot is the target's, the source sends
    /// every call for it to the target with ASK, and the target refuses a call naming two
    /// keys (a number's cooldown and window) while one is missing (TRYAGAIN, until the
    /// migration ends): a new number, and every number whose running cooldown the window
    /// key keeps alone. The gate asks the target with the script's one-key variant instead:
    /// new numbers are allowed once, numbers whose cooldowns moved are refused, status
    /// reads see them. The migration is held there for longer than the Redis timeout.
    @Test(.timeLimit(.minutes(2))) func aSlotWhoseKeysMovedServesItsNumbersBeforeItIsAssigned() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let base = try RedisConfiguration(url: RedisConfiguration.defaultURL, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        let seeds = try RedisConfiguration.HostPort.parseList(cluster.seedList, field: "redis-cluster")
        var configuration = try GateConfiguration(
            redis: try .cluster(seeds: seeds, base: base),
            policies: PolicySet(fallback: Policy(ladder: [.seconds(60), .seconds(120)])), defaultRegion: "CN",
            cooldownsInWindows: true)
        // Cooldowns go to window keys after two periods (a gate's warm-up). (Without
        // `cooldownsInWindows` a number is in the same state once its cooldown key expired
        // and its window key, which lasts the window, remains.)
        configuration.windowCooldownsPeriod = .milliseconds(100)
        let gate = Gate(configuration: configuration)
        let sample = Self.numbersSharingASlot(with: "+8613800138000", count: 12)
        let (running, fresh) = (Array(sample.prefix(6)), Array(sample.dropFirst(6)))
        let slot = cluster.slot(forKey: gateKey(.cooldown, sample[0]))
        // Wait for the warm-up: a probe number's cooldown lands in its window key alone.
        var probe = 0
        _ = try await poll(every: .milliseconds(100), upTo: .seconds(20)) { () -> Bool? in
            probe += 1
            let number = "+861390000\(String(format: "%04d", probe))"
            guard (try? await gate.reserve(phone: number))?.allowed == true else { return nil }
            let key = gateKey(.cooldown, number)
            return try? cluster.client(forKey: key).command("EXISTS", key) == .integer(0) ? true : nil
        }
        var tokens: [CountdownToken] = []
        for number in running {
            let decision = try await gate.reserve(phone: number)
            #expect(decision.allowed, "\(number)")
            if let token = decision.countdownToken { tokens.append(token) }
        }
        let owner = try cluster.client(forKey: gateKey(.window, running[0]))
        #expect(try owner.command("EXISTS", gateKey(.cooldown, running[0])) == .integer(0), "the window holds the cooldown")

        let source = try cluster.masterPort(forSlot: slot)
        let target = try #require(try cluster.masters().map(\.port).first { $0 != source })
        let state = MigrationRecord()
        let migration = Task.detached {
            try cluster.migrateSlot(slot, from: source, to: target, batchSize: 1_000) { step in
                guard case .moved = step else { return }
                // Every key moved; the slot stays migrating until the test is done with it.
                state.finished.withLock { $0 = true }
                let held = ContinuousClock.now
                while state.answers.withLock({ $0.isEmpty }) && ContinuousClock.now - held < .seconds(60) { usleep(20_000) }
            }
        }
        defer { state.answers.withLock { $0.append(Answer(number: "", allowed: false, sent: .now, received: .now)) } }
        _ = try await poll(every: .milliseconds(20), upTo: .seconds(20)) { state.finished.withLock { $0 } ? true : nil }
        #expect(try cluster.client(port: source).command("CLUSTER", "COUNTKEYSINSLOT", "\(slot)") == .integer(0))

        for number in running {
            let decision = try await gate.reserve(phone: number)
            #expect(!decision.allowed && decision.reason == .cooldown, "\(number): \(decision)")
            #expect(try await gate.peek(phone: number).active, "\(number)")
        }
        for number in fresh {
            #expect(try await gate.reserve(phone: number).allowed, "\(number)")
            #expect(try await gate.reserve(phone: number).reason == .cooldown, "\(number)")
        }
        // The other scripts of a number (each names keys that may not exist) are served too:
        // a countdown token's reading, a wrong code, a refund and the send after it.
        #expect(tokens.count == running.count)
        for token in tokens { #expect((try await gate.countdown(token))?.retryAfterMilliseconds ?? 0 > 0) }
        #expect(try await gate.verify(phone: fresh[0], outcome: .failed).attemptsLeft == Policy.defaultMaxFailedChecks - 1)
        #expect(try await gate.release(phone: fresh[1]))
        #expect(try await gate.reserve(phone: fresh[1]).allowed)
        state.answers.withLock { $0.append(Answer(number: "", allowed: false, sent: .now, received: .now)) }
        _ = try await migration.value
        #expect(try cluster.masterPort(forSlot: slot) == target)
        // What the target wrote during the move holds after it.
        for number in sample { #expect(try await gate.reserve(phone: number).reason == .cooldown, "\(number)") }
    }

    /// A number whose two keys a migration moves in different batches is on neither node
    /// whole between them: both answer TRYAGAIN. The gate asks again (from the slot's
    /// owner, with a backoff) for up to its Redis timeout, so a migration step shorter than
    /// that refuses nothing: here the move is held 1.5 s between the two keys of a number,
    /// with a 3 s timeout. (Before, 25 tries 20 ms apart: 503 after about half a second.)
    @Test(.timeLimit(.minutes(2))) func aNumberSplitBetweenTwoNodesWaitsForTheNextBatch() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let base = try RedisConfiguration(url: RedisConfiguration.defaultURL, connectTimeout: .seconds(3), commandTimeout: .seconds(3))
        let seeds = try RedisConfiguration.HostPort.parseList(cluster.seedList, field: "redis-cluster")
        // A window policy keeping cooldowns in cooldown keys: a number holds both keys.
        let gate = Gate(configuration: try GateConfiguration(
            redis: try .cluster(seeds: seeds, base: base),
            policies: PolicySet(fallback: Policy(ladder: [.seconds(60), .seconds(120)])), defaultRegion: "CN"))
        let sample = Self.numbersSharingASlot(with: "+8613800138000", count: 4)
        _ = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in try await gate.peek(phone: sample[0]) }
        for number in sample { #expect(try await gate.reserve(phone: number).allowed, "\(number)") }
        let slot = cluster.slot(forKey: gateKey(.cooldown, sample[0]))
        let owner = try cluster.client(port: cluster.masterPort(forSlot: slot))
        for number in sample {
            #expect(try owner.command("EXISTS", gateKey(.cooldown, number), gateKey(.window, number)) == .integer(2), "\(number)")
        }
        let source = try cluster.masterPort(forSlot: slot)
        let target = try #require(try cluster.masters().map(\.port).first { $0 != source })
        let state = MigrationRecord()
        let split = Mutex<String?>(nil)
        let migration = Task.detached {
            var moved: Set<String> = []
            try cluster.migrateSlot(slot, from: source, to: target, batchSize: 1) { step in
                guard case .moved(let keys) = step else { return }
                moved.formUnion(keys)
                // The first number with one key moved and the other not: hold the move there.
                guard split.withLock({ $0 }) == nil, let number = sample.first(where: { number in
                    moved.contains(gateKey(.cooldown, number)) != moved.contains(gateKey(.window, number))
                }) else { return }
                split.withLock { $0 = number }
                usleep(1_500_000)
                state.finished.withLock { $0 = true }
            }
        }
        let number = try await poll(every: .milliseconds(10), upTo: .seconds(20)) { split.withLock { $0 } }
        let asked = ContinuousClock.now
        let decision = try await gate.reserve(phone: try #require(number))
        let waited = ContinuousClock.now - asked
        #expect(!decision.allowed && decision.reason == .cooldown, "\(decision)")
        // It was answered once the move went on (not at once, not at the timeout).
        #expect(state.finished.withLock { $0 }, "answered after \(waited), before the hold ended")
        _ = try await migration.value
        for number in sample { #expect(try await gate.reserve(phone: number).reason == .cooldown, "\(number)") }
    }
}
