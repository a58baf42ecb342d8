import Foundation
import RedisClient
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// With `cooldownsInWindows`, a policy with a window keeps a number's running cooldown in its
/// window key, once every gate whose policy for the purpose is a plain `SET NX` knows to read
/// windows (`WindowCooldowns`). These tests use a short announcement period, so a gate begins
/// keeping cooldowns in windows within a fraction of a second.
@Suite("Gate: cooldowns kept in window keys, beside plain gates")
struct GateWindowCooldownTests {
    static let period: Duration = .milliseconds(100)
    static let counted = Policy(ladder: [.seconds(60), .seconds(300)], window: .seconds(3600), maxSends: 5)

    static func numbers(_ count: Int, from start: Int = 0) -> [String] {
        (start..<start + count).map { "+86139" + String(format: "%08d", $0) }
    }

    /// Sends fresh numbers through `gate` until one's cooldown is kept in its window key
    /// (the gate's warm-up is two periods); returns how many it took.
    @discardableResult
    static func warmUp(_ gate: Gate, _ client: RedisTestClient, from start: Int = 90_000) async throws -> Int {
        // Thirty seconds of this process's running time: the gate's timers run in it, and a
        // process frozen past them (CI) did not make the gate slow; a machine starved by
        // other work delays each announcement, and one late by two periods starts the
        // warm-up again (it took over ten seconds under two busy loops beside the tests).
        let deadline = PatientDeadline(.seconds(30))
        var index = start
        // One more try once the deadline has passed: a task starved on a loaded machine may
        // have tried only early, before the warm-up could be over.
        var lastTry = false
        while !lastTry {
            lastTry = deadline.hasPassed
            let phone = numbers(1, from: index)[0]
            index += 1
            #expect(try await gate.reserve(phone: phone).allowed)
            if try client.heldCooldown(phone)?.heldIn == .window { return index - start }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the gate never kept a cooldown in a window key")
        return index - start
    }

    @Test func aWarmGateKeepsTheCooldownInTheWindowAndEveryReaderFindsIt() async throws {
        try await withRedis { redis in
            let gate = try makeGate(url: redis.url, policy: Self.counted, windowCooldownsPeriod: Self.period, cooldownsInWindows: true)
            let client = try redis.client()
            try await Self.warmUp(gate, client)

            let granted = StallWatch.mark()
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed && first.retryAfterMilliseconds == 60_000)
            #expect(try client.command("EXISTS", cooldownKey()) == .integer(0), "no cooldown key of its own")
            let held = try #require(try client.heldCooldown(number))
            #expect(held.heldIn == .window)
            #expect(try client.windowSends(windowKey()).map(\.nonce) == [held.nonce])

            // Refused for the cooldown, with its token; peek and the token see the same wait.
            let again = try await gate.reserve(phone: number)
            #expect(!again.allowed && again.reason == .cooldown && again.countdownToken == first.countdownToken)
            // What remains of the 60 s by the time passed since the grant (Redis counts on
            // while this process stands frozen; CI froze it for up to 15 s).
            expectRemaining(again.retryAfterMilliseconds, since: granted)
            #expect(again.sendsInWindow == 1)
            let peek = try await gate.peek(phone: number)
            #expect(peek.active)
            expectRemaining(peek.retryAfterMilliseconds, since: granted)
            let firstToken = try #require(first.countdownToken)
            let reading = try #require(try await gate.countdown(firstToken))
            expectRemaining(reading.retryAfterMilliseconds, since: granted)

            // When it runs out, the ladder's next step begins.
            // A second past its end: the gate's reckoning of Redis's clock, which the scripts
            // take, may trail Redis's own by a round trip.
            try client.runOutCooldown(number)
            try client.advanceTime(byMilliseconds: 1_000)
            #expect(try await gate.peek(phone: number).active == false)
            #expect(try await gate.countdown(firstToken) == nil, "an ended cooldown's token is stale")
            let second = try await gate.reserve(phone: number)
            #expect(second.allowed && second.retryAfterMilliseconds == 300_000 && second.sendsInWindow == 2)

            // A refund ends it: its token is stale, its send leaves the window, the step goes back.
            #expect(try await gate.release(phone: number))
            #expect(try client.heldCooldown(number) == nil)
            let secondToken = try #require(second.countdownToken)
            #expect(try await gate.countdown(secondToken) == nil)
            #expect(try await gate.peek(phone: number).active == false)
            #expect(try client.windowSends(windowKey()).count == 1)
            #expect(try await gate.release(phone: number) == false, "nothing runs: nothing to refund")
            let third = try await gate.reserve(phone: number)
            #expect(third.allowed && third.retryAfterMilliseconds == 300_000 && third.sendsInWindow == 2)
        }
    }

    /// The window's cooldown names its send's idempotency record, so a refund voids it and
    /// a retry with the same key is decided afresh (it counts again), not replayed.
    @Test func aRefundVoidsTheRecordTheWindowsCooldownNames() async throws {
        try await withRedis { redis in
            let gate = try makeGate(url: redis.url, policy: Self.counted, windowCooldownsPeriod: Self.period, cooldownsInWindows: true)
            let client = try redis.client()
            try await Self.warmUp(gate, client)
            let record = testKeys.idempotencyRecord(idempotencyKey: "order-1")
            let first = try await gate.reserve(phone: number, idempotencyKey: "order-1")
            #expect(first.allowed)
            let held = try #require(try client.heldCooldown(number))
            #expect(held.heldIn == .window && held.link == record)
            #expect(try await gate.reserve(phone: number, idempotencyKey: "order-1").replayed)
            #expect(try await gate.release(phone: number))
            #expect(try client.command("EXISTS", record) == .integer(0))
            let retried = try await gate.reserve(phone: number, idempotencyKey: "order-1")
            #expect(retried.allowed && !retried.replayed && retried.countdownToken != first.countdownToken)
        }
    }

    /// A lock never shortens a wait: it lasts at least as long as the window's cooldown.
    @Test func aLockOutlastsTheWindowsCooldown() async throws {
        var policy = Self.counted
        policy.ladder = [.seconds(600)]
        policy.maxFailedChecks = 1
        policy.lockout = .seconds(30)
        policy.lockoutScope = .number
        try await withRedis { redis in
            let gate = try makeGate(url: redis.url, policy: policy, windowCooldownsPeriod: Self.period, cooldownsInWindows: true)
            let client = try redis.client()
            try await Self.warmUp(gate, client)
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try client.heldCooldown(number)?.heldIn == .window)
            let locked = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .failed) }
            #expect(locked?.code == "locked")
            let lockLeft = try #require(try client.command("PTTL", cooldownKey()).integer)
            #expect(lockLeft > 590_000, "the lock lasts the 600 s cooldown, not its 30 s lockout")
            let refused = try await gate.reserve(phone: number)
            #expect(refused.reason == .locked && refused.retryAfterMilliseconds > 590_000)
            let release = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
            #expect(release?.code == "locked", "a locked number's cooldown is not refunded")
        }
    }

    /// Gates of both policies side by side for one purpose (a rolling change), whichever
    /// started first: no number is allowed by both, before, during and after the windowed
    /// gate's warm-up, and the plain gate's refusal carries the windowed gate's token.
    @Test(arguments: [true, false])
    func aPlainGateNeverAllowsANumberAWindowedGateHolds(plainFirst: Bool) async throws {
        try await withRedis { redis in
            let client = try redis.client()
            var plain: Gate?
            if plainFirst {
                plain = try makeGate(url: redis.url, windowCooldownsPeriod: Self.period)
                #expect(try await plain!.reserve(phone: Self.numbers(1, from: 80_000)[0]).allowed)
            }
            let windowed = try makeGate(url: redis.url, policy: Self.counted, windowCooldownsPeriod: Self.period, cooldownsInWindows: true)
            if !plainFirst {
                try await Self.warmUp(windowed, client)
                plain = try makeGate(url: redis.url, windowCooldownsPeriod: Self.period)
            }
            var inWindows = 0
            for phone in Self.numbers(60) {
                let first = try await windowed.reserve(phone: phone)
                #expect(first.allowed)
                if try client.heldCooldown(phone)?.heldIn == .window { inWindows += 1 }
                let second = try await plain!.reserve(phone: phone)
                #expect(!second.allowed && second.reason == .cooldown, "\(phone) allowed by both gates")
                #expect(second.countdownToken == first.countdownToken)
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(inWindows > 0, "the windowed gate kept cooldowns in windows by the end")
            // And the other way: a number the plain gate allowed is refused by the windowed one.
            let phone = Self.numbers(1, from: 70_000)[0]
            #expect(try await plain!.reserve(phone: phone).allowed)
            #expect(try await windowed.reserve(phone: phone).reason == .cooldown)
        }
    }

    /// A windowed gate whose announcements failed for more than two periods warms up again
    /// once they work: a plain gate may meanwhile have read a registry without its purposes
    /// (here the registry is a string, so every read fails, then it is deleted).
    @Test func aGateWarmsUpAgainAfterItsAnnouncementsLapsed() async throws {
        let period: Duration = .seconds(1)
        try await withRedis { redis in
            let gate = try makeGate(url: redis.url, policy: Self.counted, windowCooldownsPeriod: period, cooldownsInWindows: true)
            let client = try redis.client()
            try await Self.warmUp(gate, client)
            _ = try client.command("SET", testKeys.windowCooldowns, "not a hash")
            var index = 50_000
            // In this process's running time (the gate's timers run in it), and judged by
            // what was seen, not by the clock after the loop (a freeze there is no failure).
            let deadline = PatientDeadline(.seconds(10))
            var backInCooldownKeys = false
            // Tried once more after the deadline: this task, starved on a loaded machine (CI),
            // may have tried only in the two periods before a stale read counts.
            var lastTry = false
            while !lastTry && !backInCooldownKeys {
                lastTry = deadline.hasPassed
                let phone = Self.numbers(1, from: index)[0]
                index += 1
                #expect(try await gate.reserve(phone: phone).allowed)
                backInCooldownKeys = try client.heldCooldown(phone)?.heldIn == .cooldown
                if !backInCooldownKeys { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(backInCooldownKeys, "a gate whose reads fail goes back to cooldown keys")
            _ = try client.command("DEL", testKeys.windowCooldowns)
            let announced = PatientDeadline(.seconds(5))
            while try client.command("EXISTS", testKeys.windowCooldowns) == .integer(0), announced.hasTimeLeft {
                try await Task.sleep(for: .milliseconds(10))
            }
            // Announced again a moment ago: still two periods of cooldown keys.
            let phone = Self.numbers(1, from: 60_000)[0]
            #expect(try await gate.reserve(phone: phone).allowed)
            #expect(try client.heldCooldown(phone)?.heldIn == .cooldown)
            try await Self.warmUp(gate, client, from: 61_000)
        }
    }

    /// Without `cooldownsInWindows` (the default) a gate with a window keeps its cooldowns in
    /// cooldown keys, as versions before it did, and announces nothing: plain gates keep `SET NX`.
    @Test func offByDefaultAWindowedGateKeepsCooldownKeys() async throws {
        try await withRedis { redis in
            let gate = try makeGate(url: redis.url, policy: Self.counted, windowCooldownsPeriod: Self.period)
            let client = try redis.client()
            // Long past the warm-up a gate with the option would have.
            try await Task.sleep(for: Self.period * 4)
            for phone in Self.numbers(5) {
                #expect(try await gate.reserve(phone: phone).allowed)
                #expect(try client.heldCooldown(phone)?.heldIn == .cooldown)
            }
            #expect(try client.command("EXISTS", testKeys.windowCooldowns) == .integer(0))
        }
    }

    /// Once no gate keeps a purpose's cooldowns in windows and the last such cooldown could
    /// have ended, a plain gate decides with `SET NX` again (no script call). A period of a
    /// second: a read more than two periods old sends a plain gate to the script, which a
    /// loaded machine's late timer must not do here.
    @Test func aPlainGateTakesSETNXWhenNoGateKeepsCooldownsInWindows() async throws {
        let period: Duration = .seconds(1)
        try await withRedis { redis in
            let client = try redis.client()
            // An announcement that has run out: the gate's first read forgets it.
            _ = try client.command("HSET", testKeys.windowCooldowns, "default", "1")
            let plain = try makeGate(url: redis.url, windowCooldownsPeriod: period)
            #expect(try await plain.reserve(phone: number).allowed)
            _ = try client.command("CONFIG", "RESETSTAT")
            let sending = StallWatch.mark()
            for phone in Self.numbers(5) { #expect(try await plain.reserve(phone: phone).allowed) }
            let stats = try #require(try client.command("INFO", "commandstats").string)
            if StallWatch.shared.stalled(from: sending) < .milliseconds(500) {
                #expect(stats.contains("cmdstat_set:calls=5,"), "\(stats)")
                // Only the registry's reads (one HGETALL each; a loaded machine may fit a third in).
                #expect(commandCalls("evalsha", in: stats) == commandCalls("hgetall", in: stats), "only the registry's reads: \(stats)")
            } else {
                // Frozen (CI) for long enough that the gate's last read may have gone stale
                // (two periods): a stale read rightly sends a send to the script instead.
                #expect(commandCalls("set", in: stats) + commandCalls("evalsha", in: stats) >= 5, "\(stats)")
                #expect(commandCalls("set", in: stats) <= 5, "\(stats)")
            }
            #expect(try client.command("HGET", testKeys.windowCooldowns, "default") == .null)

            // A running announcement: the plain gate decides with the script (evalsha per send).
            let until = try client.redisTime() + 600_000
            _ = try client.command("HSET", testKeys.windowCooldowns, "default", String(until))
            try await Task.sleep(for: period * 2.5)  // the gate's next read (a stale one takes the script too)
            _ = try client.command("CONFIG", "RESETSTAT")
            for phone in Self.numbers(5, from: 100) { #expect(try await plain.reserve(phone: phone).allowed) }
            let scripted = try #require(try client.command("INFO", "commandstats").string)
            #expect(commandCalls("evalsha", in: scripted) >= 5, "\(scripted)")
        }
    }
}

@Suite("The registry of cooldowns kept in windows")
struct WindowCooldownsReadTests {
    @Test func aReadIsEachPurposesEndOnThisGatesClock() {
        let now = ContinuousClock.now
        let read = WindowCooldowns.read(
            .array([.integer(1_000_000), .bulk(Array("login".utf8)), .bulk(Array("1060000".utf8))]), at: now)
        #expect(read == ["login": now + .seconds(60)])
        #expect(WindowCooldowns.read(.array([.integer(5)]), at: now) == [:])
        #expect(WindowCooldowns.read(.array([.integer(5), .bulk(Array("login".utf8))]), at: now) == nil)
        #expect(WindowCooldowns.read(.array([.integer(5), .bulk(Array("login".utf8)), .bulk(Array("x".utf8))]), at: now) == nil)
        #expect(WindowCooldowns.read(.integer(5), at: now) == nil)
    }
}
