import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 3: the SMS-pumping guard against a real Redis, tried the way a pumping
/// script would: many numbers of one prefix, concurrency, numbers the cooldown refuses,
/// and the ways out (the window passing, conversion recovering, a trusted number).
@Suite("Gate: SMS-pumping guard against a real Redis")
struct GatePumpingTests {
    @Test func anAttackBlocksItsPrefixOnlyAndTrustedNumbersStillGetCodes() async throws {
        try await withLiveGate(policy: PumpingAttack.policy) { redis, gate async throws in
            let client = try redis.client()
            let outcome = try await PumpingAttack.run(on: gate)
            PumpingAttack.expectBlockedWithinMinVolume(outcome)
            #expect(outcome.normalAllowed == 4 * 30)

            // The listing names exactly the attacked prefix, with its figures.
            let blocked = try await gate.blockedPrefixes()
            #expect(blocked.map(\.prefix.text) == [PumpingAttack.attackedPrefix])
            let figures = try #require(blocked.first)
            #expect(figures.purpose == .default && figures.prefix.callingCode == 44)
            #expect(figures.blocked && figures.sends == 20 && figures.verifications == 1 && figures.conversion == 0.05)
            #expect(figures.retryAfterMilliseconds > 0 && figures.retryAfterMilliseconds <= 3_600_000)
            #expect(figures.blockedSinceMilliseconds.map { $0 <= figures.serverTimeMilliseconds } == true)

            // Another number of the prefix is refused; the trusted one is not (once its own
            // cooldown has run out), and its send counts.
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(500)).reason == .suspectedPumping)
            #expect(try await gate.reserve(phone: PumpingAttack.trustedNumber).reason == .cooldown)
            try client.runOut(cooldownKey(PumpingAttack.trustedNumber))
            #expect(try await gate.reserve(phone: PumpingAttack.trustedNumber).allowed)
            #expect(try await gate.blockedPrefixes().first?.sends == 21)

            // A national spelling is the same number, of the same prefix; another purpose
            // counts its prefixes on its own (login's +447911 had no sends).
            #expect(try await gate.reserve(phone: "07911 000501", region: "GB").reason == .suspectedPumping)
            #expect(try await gate.reserve(phone: PumpingAttack.trustedNumber, purpose: "login").allowed)

            // When the window has passed, the prefix is free again and listed no more.
            try client.advanceTime(byMilliseconds: 3_600_000)
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(501)).allowed)
            #expect(try await gate.blockedPrefixes().isEmpty)
        }
    }

    /// Observe mode (`--observe suspected_pumping`): the same attack goes through, every
    /// send the guard would have refused says so in `observed`, and the guard keeps
    /// counting, so the listing shows the prefix as enforcing would have found it.
    @Test func inObserveModeTheAttackGoesThroughAndIsReported() async throws {
        try await withLiveGate(policy: PumpingAttack.observingPolicy) { _, gate async throws in
            let outcome = try await PumpingAttack.run(on: gate)
            // The first 19 filled the volume with the trusted user's send; the other 41
            // would have been refused.
            PumpingAttack.expectObserved(outcome, listed: try await gate.blockedPrefixes())
        }
    }

    /// One real number reported verified again and again counts once per guard window:
    /// it cannot lift a pumped range's conversion (found by review: ten reports made 1 of
    /// 20 sends read as 50 %). Its trust is renewed each time all the same.
    @Test func oneNumberVerifiedAgainAndAgainCountsOncePerWindow() async throws {
        try await withLiveGate(policy: PumpingAttack.policy) { redis, gate async throws in
            for index in 0..<20 { #expect(try await gate.reserve(phone: PumpingAttack.attacked(index)).allowed) }
            for _ in 0..<10 { _ = try await gate.verify(phone: PumpingAttack.attacked(0), outcome: .verified) }
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(20)).reason == .suspectedPumping)
            #expect(try await gate.blockedPrefixes().first?.verifications == 1)
            // The verified number itself is trusted: its next send (once its cooldown ends) passes.
            try redis.client().runOut(cooldownKey(PumpingAttack.attacked(0)))
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(0)).allowed)
        }
    }

    /// A retry of an answer given before the prefix was blocked is that answer (its
    /// `Idempotency-Key` replays it), not a refusal; in observe mode it reports nothing new.
    @Test func aReplayIsNotRefusedByAPrefixBlockedSince() async throws {
        for observing in [false, true] {
            var policy = PumpingAttack.policy
            if observing { policy.observe = [.suspectedPumping] }
            try await withLiveGate(policy: policy) { _, gate async throws in
                let first = try await gate.reserve(phone: PumpingAttack.attacked(0), idempotencyKey: "order-1")
                #expect(first.allowed && first.observed.isEmpty)
                for index in 1..<25 { _ = try await gate.reserve(phone: PumpingAttack.attacked(index)) }
                let blocked = try await gate.reserve(phone: PumpingAttack.attacked(30))
                #expect(observing ? blocked.observed == [.suspectedPumping] : blocked.reason == .suspectedPumping)
                let replay = try await gate.reserve(phone: PumpingAttack.attacked(0), idempotencyKey: "order-1")
                #expect(replay.replayed && replay.allowed && replay.observed.isEmpty, "\(replay)")
                #expect(replay.countdownToken == first.countdownToken)
            }
        }
    }

    /// The wait a refusal gives is when the prefix is free again: a moment before it, it
    /// is still refused; at it, allowed.
    @Test func theRefusalsWaitIsReal() async throws {
        try await withLiveGate(policy: PumpingAttack.policy) { redis, gate async throws in
            for index in 0..<20 { #expect(try await gate.reserve(phone: PumpingAttack.attacked(index)).allowed) }
            let refusal = try await gate.reserve(phone: PumpingAttack.attacked(20))
            #expect(refusal.reason == .suspectedPumping)
            let wait = Int(refusal.retryAfterMilliseconds)
            // Ten buckets of six minutes: every send of the attack leaves the window within
            // one bucket of its full hour.
            #expect(wait > 3_600_000 - 360_000 - 10_000 && wait <= 3_600_000, "\(wait)")
            let client = try redis.client()
            try client.advanceTime(byMilliseconds: wait - 5_000)
            let still = try await gate.reserve(phone: PumpingAttack.attacked(21))
            #expect(still.reason == .suspectedPumping && still.retryAfterMilliseconds <= 5_000, "\(still.retryAfterMilliseconds)")
            try client.advanceTime(byMilliseconds: 5_000)
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(22)).allowed)
        }
    }

    /// Verified outcomes lift the conversion back over the minimum: the prefix is free.
    @Test func aPrefixIsFreeAgainWhenItsConversionRecovers() async throws {
        try await withLiveGate(policy: PumpingAttack.policy) { _, gate async throws in
            for index in 0..<20 { #expect(try await gate.reserve(phone: PumpingAttack.attacked(index)).allowed) }
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(20)).reason == .suspectedPumping)
            // 5 of 20 is 25 %: still under 30 %.
            for index in 0..<5 { _ = try await gate.verify(phone: PumpingAttack.attacked(index), outcome: .verified) }
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(21)).reason == .suspectedPumping)
            _ = try await gate.verify(phone: PumpingAttack.attacked(5), outcome: .verified)
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(22)).allowed)
        }
    }

    /// Fifty sends at once to fifty numbers of a fresh prefix: exactly min-sends are
    /// allowed, as the guard counts each send in the same step that judges the prefix.
    @Test func concurrentSendsGetExactlyTheMinVolume() async throws {
        try await withLiveGate(policy: PumpingAttack.policy) { _, gate async throws in
            let decisions = await withTaskGroup(of: Decision?.self) { group in
                for index in 0..<50 { group.addTask { try? await gate.reserve(phone: PumpingAttack.attacked(index)) } }
                return await group.reduce(into: [Decision?]()) { $0.append($1) }
            }
            #expect(decisions.compactMap { $0 }.count == 50)
            #expect(decisions.filter { $0?.allowed == true }.count == 20)
            #expect(decisions.filter { $0?.reason == .suspectedPumping }.count == 30)
        }
    }

    /// Requests the number's own cooldown refuses are given back: they are no sends, and
    /// they neither fill the prefix's volume nor lower its conversion.
    @Test func sendsTheNumberRefusesDoNotCount() async throws {
        try await withLiveGate(policy: PumpingAttack.policy) { _, gate async throws in
            for attempt in 0..<30 { #expect(try await gate.reserve(phone: PumpingAttack.attacked(0)).allowed == (attempt == 0)) }
            for index in 1..<20 { #expect(try await gate.reserve(phone: PumpingAttack.attacked(index)).allowed, "\(index)") }
            #expect(try await gate.reserve(phone: PumpingAttack.attacked(20)).reason == .suspectedPumping)
        }
    }

    /// With the guard off (the default) a send is the default policy's one SET, and a
    /// verification writes no trust: not one command more for the guard.
    @Test func theGuardOffCostsNoCommand() async throws {
        try await withLiveGate { redis, gate async throws in
            let client = try redis.client()
            // Connected, and the token secret made (the first send's own SET).
            #expect(try await gate.reserve(phone: "+8613900000001").allowed)
            _ = try client.command("CONFIG", "RESETSTAT")
            #expect(try await gate.reserve(phone: number).allowed)
            let stats = try client.command("INFO", "commandstats").string ?? ""
            // A `TIME` may ride along: the connection reads Redis's clock after a command when
            // its reckoning is due (on a slow run, this send's turn); it is no guard's. So may
            // the gate's own read of the window registry (one EVALSHA of one HGETALL, every 5 s).
            #expect(commandCalls("evalsha", in: stats) == commandCalls("hgetall", in: stats), "\(stats)")
            let calls = stats.split(whereSeparator: \.isNewline).filter { line in
                line.hasPrefix("cmdstat_") && !["info", "config", "time", "evalsha", "hgetall"].contains { line.hasPrefix("cmdstat_\($0)") }
            }
            #expect(calls.count == 1 && calls.first?.hasPrefix("cmdstat_set:calls=1,") == true, "\(stats)")
            _ = try await gate.verify(phone: number, outcome: .verified)
            #expect(try client.command("EXISTS", gateKey(.trusted, number, purpose: "default")) == .integer(0))
            #expect(try client.command("KEYS", "rg:pump:*") == .array([]))
        }
    }

    /// Blocking more prefixes than the registry holds does not grow it: it keeps the
    /// 1 000 newest, and the listing answers at most that many.
    @Test func theRegistryOfBlockedPrefixesIsBounded() async throws {
        // Eight national digits: each prefix is a hundred numbers; one send blocks it.
        let policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 1, window: .seconds(3600), prefixDigits: 8))
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let prefixes = GateWorker.blockedPrefixCapacity + 5
            for index in 0..<prefixes {
                let base = "+447911\(String(format: "%04d", index))0"
                #expect(try await gate.reserve(phone: base + "0").allowed)
                #expect(try await gate.reserve(phone: base + "1").reason == .suspectedPumping)
            }
            #expect(try redis.client().command("ZCARD", "rg:pump:blocked") == .integer(GateWorker.blockedPrefixCapacity))
            let blocked = try await gate.blockedPrefixes()
            #expect(blocked.count == GateWorker.blockedPrefixCapacity)
            // The newest were kept: the first five prefixes blocked (+4479110000 to 04) are left out
            // (same-millisecond ties go by name, and theirs are the smallest too).
            #expect(!blocked.contains { $0.prefix.text == "+4479110000" } && blocked.contains { $0.prefix.text == "+4479110100" })
        }
    }

    /// A `verified` outcome marks the number trusted for `trustedFor`, and no longer.
    @Test func trustLastsTrustedFor() async throws {
        var policy = PumpingAttack.policy
        policy.pumping.trustedFor = .seconds(7200)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let before = ContinuousClock.now
            _ = try await gate.verify(phone: PumpingAttack.trustedNumber, outcome: .verified)
            let trusted = gateKey(.trusted, PumpingAttack.trustedNumber, purpose: "default")
            let ttl = try redis.client().command("PTTL", trusted).integer ?? 0
            // Set to the full 7 200 s: less only the real time since (seconds on a loaded machine).
            let passed = (ContinuousClock.now - before).wholeMilliseconds
            #expect(ttl > 7_199_000 - passed && ttl <= 7_200_000, "\(ttl) ms left after \(passed) ms")
        }
    }
}
