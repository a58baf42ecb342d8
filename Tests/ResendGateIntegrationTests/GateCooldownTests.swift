import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// The library against a real Redis: reserve, peek and release of one number's cooldown.
@Suite("Gate: cooldowns against a real Redis")
struct GateCooldownTests {
    @Test func allowsFirstSendThenDeniesWithTheRemainingTime() async throws {
        try await withLiveGate { redis, gate async throws in
            let start = ContinuousClock.now
            let wallBefore = Int64(Date().timeIntervalSince1970 * 1000)
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed)
            #expect(first.reason == nil)
            #expect(first.phone.e164 == number)
            #expect(first.purpose.name == "default")
            #expect(first.retryAfterMilliseconds == 60_000)
            #expect(first.retryAfter == 60)
            // server_time is Redis's clock, on this same machine.
            // Between this machine's clock before and after the call (within 2 s): a test
            // process frozen meanwhile (CI) reads the clock after late.
            let wallAfter = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(first.serverTimeMilliseconds > wallBefore - 2_000 && first.serverTimeMilliseconds < wallAfter + 2_000,
                    "server_time \(first.serverTimeMilliseconds), this clock \(wallBefore)...\(wallAfter)")
            #expect(first.resendAtMilliseconds == first.serverTimeMilliseconds + 60_000)
            #expect(first.sendsInWindow == 1)
            #expect(first.sendsLeft == nil)  // no cap
            #expect(first.nextRetryAfterMilliseconds == 60_000)

            let second = try await gate.reserve(phone: number)
            #expect(!second.allowed)
            #expect(second.reason == .cooldown)
            expectRemaining(second.retryAfterMilliseconds, since: start)
            #expect(second.retryAfter == Decision.wholeSeconds(second.retryAfterMilliseconds))
            #expect(second.resendAtMilliseconds == second.serverTimeMilliseconds + second.retryAfterMilliseconds)
            #expect(second.resendAtMilliseconds - first.resendAtMilliseconds < 50)  // the same deadline

            let client = try redis.client()
            // One key a number, the cooldown: no countdown-token key.
            #expect(try client.keys() == [cooldownKey()])
            #expect(try client.keys("rg:*").sorted() == [cooldownKey(), tokenSecretKey].sorted())
            // The cooldown key holds the nonce the countdown token both answers carry names.
            let token = try #require(first.countdownToken)
            #expect(second.countdownToken == token)
            let secret = try #require(try client.command("GET", tokenSecretKey).string)
            let contents = try #require(CountdownTokenCipher(secret: Array(secret.utf8)).open(token))
            #expect(contents.number == number && contents.purpose == .default)
            // The plain cooldown's key holds the nonce, then the deadline: now + 60 s by the gate's clock.
            let value = try #require(try client.command("GET", cooldownKey()).string)
            #expect(value.hasPrefix(contents.cooldownValue) && value.utf8.count == 28, "\(value)")
            let deadline = try #require(Int64(value.dropFirst(16), radix: 16))
            #expect(deadline == first.serverTimeMilliseconds + 60_000)
        }
    }

    @Test func denialNeitherExtendsTheCooldownNorCountsASend() async throws {
        let ladder = Policy(ladder: [.seconds(60), .seconds(120)])
        try await withLiveGate(policy: ladder) { redis, gate async throws in
            let client = try redis.client()
            let start = ContinuousClock.now
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed)
            #expect(first.retryAfterMilliseconds == 60_000)
            #expect(first.sendsInWindow == 1)
            let before = try #require(try client.pttl(cooldownKey()))

            for _ in 0..<5 {
                let denied = try await gate.reserve(phone: number)
                #expect(!denied.allowed)
                #expect(denied.reason == .cooldown)
                #expect(denied.sendsInWindow == 1)
                // The key is not extended (`after` below, exactly); the answer's wait is by the
                // gate's reckoning of Redis's clock, which may trail it by half a round trip:
                // under a sanitizer's load, tens of ms.
                #expect(denied.retryAfterMilliseconds <= before + 1_000)
            }
            let after = try #require(try client.pttl(cooldownKey()))
            #expect(after <= before)
            expectRemaining(Int64(after), since: start)
            #expect(try client.windowSends(windowKey()).count == 1)
            let windowLeft = try #require(try client.pttl(windowKey()))
            #expect(windowLeft > 86_300_000 && windowLeft <= 86_400_000)
        }
    }

    @Test func peekNeverConsumes() async throws {
        try await withLiveGate { redis, gate async throws in
            let client = try redis.client()
            let idle = try await gate.peek(phone: number)
            #expect(!idle.active)
            #expect(idle.retryAfterMilliseconds == 0)
            #expect(idle.retryAfter == 0)
            #expect(idle.resendAtMilliseconds == nil)
            #expect(try client.keys() == [])

            let start = ContinuousClock.now
            let reserved = try await gate.reserve(phone: number)
            #expect(reserved.allowed)

            let running = try await gate.peek(phone: number)
            #expect(running.active)
            expectRemaining(running.retryAfterMilliseconds, of: reserved.retryAfterMilliseconds, since: start)
            #expect(running.resendAtMilliseconds == running.serverTimeMilliseconds + running.retryAfterMilliseconds)

            let again = try await gate.peek(phone: number)
            #expect(again.retryAfterMilliseconds <= running.retryAfterMilliseconds)
            let denied = try await gate.reserve(phone: number)
            #expect(!denied.allowed)
            #expect(denied.retryAfterMilliseconds <= again.retryAfterMilliseconds)
        }
    }

    /// The status and the countdown count to the deadline the send answered (the one its
    /// value holds), not to the key's TTL, unless the key outlives it: Redis's own clock and
    /// the gate's reckoning of it differ by a few ms, more on a loaded machine, and a reading
    /// must neither move the "resend at" a client shows nor end while the key still refuses.
    /// Here the TTL is moved 20 s before, then 20 s after, the deadline.
    @Test(arguments: [40_000, 80_000])
    func readingsCountToTheDeadlineTheSendAnsweredOrTheKeysEnd(ttl: Int) async throws {
        try await withLiveGate { redis, gate async throws in
            let first = try await gate.reserve(phone: number)
            let token = try #require(first.countdownToken)
            #expect(try redis.client().command("PEXPIRE", cooldownKey(), String(ttl)).integer == 1)
            let status = try await gate.peek(phone: number)
            let reading = try #require(try await gate.countdown(token))
            let expected = ttl < 60_000 ? first.resendAtMilliseconds : status.serverTimeMilliseconds + Int64(ttl)
            #expect(abs(try #require(status.resendAtMilliseconds) - expected) < (ttl < 60_000 ? 1 : 1_000))
            #expect(abs(reading.serverTimeMilliseconds + reading.retryAfterMilliseconds - expected) < (ttl < 60_000 ? 1 : 1_000))
        }
    }

    @Test func releaseEndsTheCooldownAtOnce() async throws {
        try await withLiveGate { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try await gate.release(phone: number) == true)
            // Only the record of the refund is left (the window counts refunds).
            #expect(try redis.client().keys() == [refundsKey()])
            #expect(try await gate.peek(phone: number).active == false)

            let again = try await gate.reserve(phone: number)
            #expect(again.allowed)
            #expect(again.retryAfterMilliseconds == 60_000)
        }
    }

    @Test func releaseWithoutACooldownReturnsFalse() async throws {
        try await withLiveGate { redis, gate async throws in
            #expect(try await gate.release(phone: number) == false)
            #expect(try await gate.release(phone: "+8613900139000", purpose: "login") == false)
            #expect(try redis.client().keys() == [])
        }
    }

    @Test func purposesHaveIndependentCooldowns() async throws {
        try await withLiveGate { redis, gate async throws in
            #expect(try await gate.reserve(phone: number, purpose: "login").allowed)
            #expect(try await gate.reserve(phone: number, purpose: "signup").allowed)
            #expect(try await gate.reserve(phone: number, purpose: "login").allowed == false)
            #expect(try await gate.reserve(phone: number, purpose: "signup").allowed == false)
            #expect(try await gate.peek(phone: number).active == false)  // "default" is a purpose too

            #expect(try await gate.release(phone: number, purpose: "login"))
            #expect(try await gate.peek(phone: number, purpose: "login").active == false)
            #expect(try await gate.peek(phone: number, purpose: "signup").active)
            #expect(try await gate.reserve(phone: number, purpose: "login").allowed)

            #expect(try redis.client().keys() == [
                cooldownKey(purpose: "login"), refundsKey(purpose: "login"), cooldownKey(purpose: "signup"),
            ])
        }
    }

    @Test func everySpellingOfANumberSharesOneCooldown() async throws {
        let spellings = [
            "+86 138 0013 8000", "+86-138-0013-8000", "008613800138000", "13800138000",
            "tel:+86-138-0013-8000", "＋８６ １３８ ００１３ ８０００", "+8613800138000",
        ]
        try await withLiveGate(region: "CN") { redis, gate async throws in
            let first = try await gate.reserve(phone: spellings[0])
            #expect(first.allowed)
            for spelling in spellings.dropFirst() {
                let decision = try await gate.reserve(phone: spelling)
                #expect(!decision.allowed, "\(spelling) escaped the cooldown")
                #expect(decision.phone.e164 == number, "\(spelling)")
                #expect(try await gate.peek(phone: spelling).active, "\(spelling)")
            }
            #expect(try redis.client().keys() == [cooldownKey()])
            #expect(try await gate.release(phone: spellings.last!))
            #expect(try await gate.reserve(phone: spellings[3]).allowed)
        }
    }

    @Test func rejectsBadInputWithoutTouchingRedis() async throws {
        try await withLiveGate(region: nil) { redis, gate async throws in
            let national = await gateError { () async throws(GateError) in try await gate.reserve(phone: "13800138000") }
            #expect(national?.code == "invalid_phone")  // no default region: a country code is needed
            let garbage = await gateError { () async throws(GateError) in try await gate.reserve(phone: "not a number") }
            #expect(garbage?.code == "invalid_phone")
            #expect(garbage?.isBadInput == true)
            let purpose = await gateError { () async throws(GateError) in try await gate.reserve(phone: number, purpose: "Log In") }
            #expect(purpose?.code == "invalid_purpose")
            #expect(purpose?.isBadInput == true)
            #expect(try redis.client().keys() == [])
        }
    }

    @Test func survivesScriptFlushByReloading() async throws {
        try await withLiveGate { redis, gate async throws in
            let client = try redis.client()
            let start = ContinuousClock.now
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try client.command("SCRIPT", "FLUSH") == .simpleString("OK"))

            let other = try await gate.reserve(phone: "+8613900139000")
            #expect(other.allowed)
            #expect(other.retryAfterMilliseconds == 60_000)
            let denied = try await gate.reserve(phone: number)
            #expect(!denied.allowed)
            expectRemaining(denied.retryAfterMilliseconds, since: start)

            // peek and release are scripts too: each reloads on its own NOSCRIPT.
            #expect(try client.command("SCRIPT", "FLUSH") == .simpleString("OK"))
            #expect(try await gate.peek(phone: number).active)
            #expect(try await gate.release(phone: number))
            #expect(try await gate.reserve(phone: number).allowed)
        }
    }

    @Test func survivesScriptFlushUnderPipelinedLoad() async throws {
        try await withLiveGate { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try redis.client().command("SCRIPT", "FLUSH") == .simpleString("OK"))
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask { try await gate.reserve(phone: "+86139\(String(format: "%08d", index))").allowed }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(allowed == 200)
            #expect(try await gate.reserve(phone: number).allowed == false)
        }
    }

    /// A refusal by `SET NX` never waits longer than the policy's cooldown on the word of a
    /// deadline: one further ahead (written on a clock ahead of this gate's: another gate's,
    /// or a script's reckoning of Redis's, up to 25 ms ahead) may end after the key does, so
    /// Redis's `PTTL` gives the wait. Here a key of 60 s holds a deadline 60.9 s ahead.
    @Test func aDeadlineBeyondTheCooldownWaitsOnlyAsLongAsTheKeyLives() async throws {
        try await withLiveGate { redis, gate async throws in
            let client = try redis.client()
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed)
            let nonce = try #require(try client.command("GET", cooldownKey()).string).prefix(16)
            let wall = Int64(Date().timeIntervalSince1970 * 1000)
            let ahead = String(nonce) + String(format: "%012llx", wall + 60_900)
            #expect(try client.command("SET", cooldownKey(), ahead, "XX", "PX", "60000") == .simpleString("OK"))

            let refused = try await gate.reserve(phone: number)
            let after = try #require(try client.pttl(cooldownKey()))
            #expect(!refused.allowed && refused.reason == .cooldown)
            #expect(refused.countdownToken == first.countdownToken)
            // Not the deadline's 60.9 s (less the few ms since `wall`): at most the key's life.
            #expect(refused.retryAfterMilliseconds <= 60_000 && refused.retryAfterMilliseconds >= Int64(after),
                    "wait \(refused.retryAfterMilliseconds) ms, the key's life after it \(after) ms")
            #expect(refused.retryAfter == 60)
        }
    }

    /// A purpose whose policy changes between a gate's restarts keeps its running cooldown
    /// and that cooldown's token both ways: the plain path's value (nonce and deadline) is
    /// read by the scripts, and a script's value (nonce alone) by the plain path.
    @Test func aPolicyChangeKeepsTheRunningCooldownAndItsToken() async throws {
        let counted = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 5)
        try await withLiveGate { redis, plain async throws in
            let scripted = try makeGate(url: redis.url, policy: counted)
            let first = try await plain.reserve(phone: number)
            let seenByScript = try await scripted.reserve(phone: number)
            #expect(!seenByScript.allowed && seenByScript.reason == .cooldown)
            #expect(seenByScript.countdownToken == first.countdownToken)
            #expect(try await scripted.release(phone: number))
            #expect(try await plain.peek(phone: number).active == false)

            let granted = ContinuousClock.now
            let second = try await scripted.reserve(phone: number)
            #expect(second.allowed)
            let seenByPlain = try await plain.reserve(phone: number)
            #expect(!seenByPlain.allowed && seenByPlain.reason == .cooldown)
            #expect(seenByPlain.countdownToken == second.countdownToken)
            #expect(seenByPlain.retryAfterMilliseconds > 50_000 - millisecondsPassed(since: granted) && seenByPlain.retryAfterMilliseconds <= 60_000)
            let reading = try await plain.countdown(try #require(first.countdownToken))
            #expect(reading == nil, "the released cooldown's token is stale")
        }
    }
}
