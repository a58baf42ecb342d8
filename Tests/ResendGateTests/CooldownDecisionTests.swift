@testable import RedisClient
@testable import ResendGate
import Testing

/// The default policy's answer from the reply of `SET … NX PX … GET`, and of `PTTL` when
/// the running value's deadline cannot be trusted (Rules/Cooldowns.swift), for every
/// reply Redis can give.
@Suite("Plain cooldown: the decision its replies make")
struct CooldownDecisionTests {
    static let nonce = CountdownTokenSource().next()
    static let running = CountdownTokenSource().next()
    static let now: Int64 = 1_796_145_777_000
    static var cipher: CountdownTokenCipher { CountdownTokenCipher(secret: Array("secret of these tests".utf8)) }

    static func decide(
        _ set: Result<RedisReply, RedisError>, _ pttl: Result<RedisReply, RedisError>?, repaired: inout Bool
    ) throws -> Result<Decision, GateError>? {
        let request = SendRequest(phone: try PhoneNumber(parsing: "+8613800138000"), purpose: .default)
        var repairs = 0
        let outcome = Cooldowns.decision(
            set: set, pttl: pttl, now: now, request: request, milliseconds: 60_000, nonce: nonce,
            token: { cipher.seal(purpose: .default, number: "+8613800138000", nonce: $0) }, repair: { repairs += 1 })
        repaired = repairs == 1
        return outcome
    }

    /// A running plain cooldown's value: its nonce, then `deadline` in 12 hex digits.
    static func value(deadline: Int64) -> Result<RedisReply, RedisError> {
        .success(.bulk(Array(CooldownValue(nonce: running, deadlineMilliseconds: deadline).text.utf8)))
    }

    @Test func noRunningCooldownAllowsWithTheFreshNoncesToken() throws {
        var repaired = false
        let decision = try #require(try Self.decide(.success(.null), nil, repaired: &repaired)).get()
        #expect(decision.allowed && decision.retryAfterMilliseconds == 60_000 && decision.sendsInWindow == 1)
        #expect(decision.serverTimeMilliseconds == Self.now)
        #expect(Self.cipher.open(try #require(decision.countdownToken))?.cooldownValue == Self.nonce.text)
        #expect(!repaired)
    }

    /// One command: the wait is the running value's deadline less this gate's clock.
    @Test func aRunningCooldownRefusesWithTheWaitToItsDeadlineAndItsToken() throws {
        var repaired = false
        let decision = try #require(try Self.decide(Self.value(deadline: Self.now + 41_234), nil, repaired: &repaired)).get()
        #expect(!decision.allowed && decision.reason == .cooldown && decision.retryAfterMilliseconds == 41_234)
        #expect(decision.resendAtMilliseconds == Self.now + 41_234)
        #expect(Self.cipher.open(try #require(decision.countdownToken))?.cooldownValue == Self.running.text)
        // Just sent: the whole cooldown.
        let whole = try #require(try Self.decide(Self.value(deadline: Self.now + 60_000), nil, repaired: &repaired)).get()
        #expect(whole.retryAfterMilliseconds == 60_000)
    }

    /// A deadline that cannot be this cooldown's (past), one further ahead than the cooldown
    /// (another gate's clock ahead of this one, a script's reckoning of Redis's clock a few ms
    /// ahead, or a longer cooldown's: the key may end sooner than it says), a script's value
    /// (no deadline), or another program's: PTTL decides, so a refusal never waits longer
    /// than the key lives.
    @Test(arguments: [Int64(-5), 0, 60_001, 60_900, 61_001, 10_000_000])
    func anUntrustedDeadlineAsksRedis(offset: Int64) throws {
        var repaired = false
        #expect(try Self.decide(Self.value(deadline: Self.now + offset), nil, repaired: &repaired) == nil)
        let decision = try #require(try Self.decide(Self.value(deadline: Self.now + offset), .success(.integer(7_000)), repaired: &repaired)).get()
        #expect(!decision.allowed && decision.retryAfterMilliseconds == 7_000)
        #expect(decision.countdownToken != nil)
    }

    @Test func aScriptsValueOrAForeignOneAsksRedis() throws {
        var repaired = false
        let script: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        #expect(try Self.decide(script, nil, repaired: &repaired) == nil)
        let scripted = try #require(try Self.decide(script, .success(.integer(41_234)), repaired: &repaired)).get()
        #expect(scripted.retryAfterMilliseconds == 41_234)
        #expect(Self.cipher.open(try #require(scripted.countdownToken))?.cooldownValue == Self.running.text)
        // A value the gate did not write (another program's, an old 22-character token): no token.
        for foreign in ["x", Self.running.text + "00000000000G", Self.running.text + "0000000000001"] {
            let reply: Result<RedisReply, RedisError> = .success(.bulk(Array(foreign.utf8)))
            #expect(try Self.decide(reply, nil, repaired: &repaired) == nil)
            let decision = try #require(try Self.decide(reply, .success(.integer(5)), repaired: &repaired)).get()
            #expect(!decision.allowed && decision.countdownToken == nil, "\(foreign)")
        }
    }

    @Test func aKeyWithoutExpiryIsRepairedAndWaitsTheCooldown() throws {
        var repaired = false
        let set: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        let decision = try #require(try Self.decide(set, .success(.integer(-1)), repaired: &repaired)).get()
        #expect(!decision.allowed && decision.retryAfterMilliseconds == 60_000 && repaired)
    }

    @Test func aCooldownThatEndedBetweenTheTwoCommandsWaitsOneMillisecond() throws {
        var repaired = false
        let set: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        let decision = try #require(try Self.decide(set, .success(.integer(-2)), repaired: &repaired)).get()
        #expect(!decision.allowed && decision.retryAfterMilliseconds == 1 && !repaired)
    }

    /// Redis refusing the write (out of memory, a read-only replica) or the connection
    /// failing is never an allowed send.
    @Test(arguments: [
        RedisError(.server, "OOM command not allowed when used memory > 'maxmemory'."),
        RedisError(.server, "READONLY You can't write against a read only replica."),
        RedisError(.unavailable, "not connected to Redis"),
    ])
    func aRefusedWriteIsStoreUnavailable(error: RedisError) throws {
        var repaired = false
        let outcome = try Self.decide(.failure(error), nil, repaired: &repaired)
        guard case .failure(let failure)? = outcome else { Issue.record("decided: \(String(describing: outcome))"); return }
        #expect(failure.code == "store_unavailable")
        // An unexpected reply type is a failure too, never a decision.
        let odd = try Self.decide(.success(.integer(1)), nil, repaired: &repaired)
        guard case .failure? = odd else { Issue.record("decided: \(String(describing: odd))"); return }
        // So is a failed PTTL after an untrusted value.
        let set: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        let lost = try Self.decide(set, .failure(error), repaired: &repaired)
        guard case .failure? = lost else { Issue.record("decided: \(String(describing: lost))"); return }
    }

    @Test func valuesRoundTrip() throws {
        let value = CooldownValue(nonce: Self.running, deadlineMilliseconds: Self.now)
        #expect(value.text.utf8.count == 28 && value.text.hasPrefix(Self.running.text))
        let read = try #require(CooldownValue(text: Substring(value.text)))
        #expect(read.nonce == Self.running && read.deadlineMilliseconds == Self.now)
        // Twelve lower-case hex digits, leading zeros kept, at both ends of the range.
        #expect(CooldownValue(nonce: Self.running, deadlineMilliseconds: 0).text == Self.running.text + "000000000000")
        #expect(CooldownValue(nonce: Self.running, deadlineMilliseconds: (1 << 48) - 1).text == Self.running.text + "ffffffffffff")
        #expect(CooldownValue(nonce: Self.running, deadlineMilliseconds: 0x18d2a4b3c5e).text.hasSuffix("018d2a4b3c5e"))
        let scriptWritten = try #require(CooldownValue(text: Substring(Self.running.text)))
        #expect(scriptWritten.deadlineMilliseconds == nil)
        // A scripted send's value names its idempotency record after a space, past the
        // deadline (an older version's, right after the nonce): both read.
        let linked = try #require(CooldownValue(text: Substring(Self.running.text + "018d2a4b3c5e rg:idem:{0a1b}")))
        #expect(linked.nonce == Self.running && linked.deadlineMilliseconds == 0x18d2a4b3c5e)
        let older = try #require(CooldownValue(text: Substring(Self.running.text + " rg:idem:{0a1b}")))
        #expect(older.nonce == Self.running && older.deadlineMilliseconds == nil)
        #expect(CooldownValue(text: Substring(Self.running.text + "018d2a4b3c5")) == nil)
        #expect(CooldownValue(text: Substring(Self.running.text + "x18d2a4b3c5e")) == nil)
    }
}
