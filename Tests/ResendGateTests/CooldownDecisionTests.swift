@testable import RedisClient
@testable import ResendGate
import Testing

/// The default policy's answer from the replies of `SET … NX PX … GET` and `PTTL`
/// (GateWorker+Cooldown.swift), for every reply Redis can give.
@Suite("Plain cooldown: the decision its two replies make")
struct CooldownDecisionTests {
    static let nonce = CountdownTokenSource().next()
    static let running = CountdownTokenSource().next()

    static func decide(
        _ set: Result<RedisReply, RedisError>, _ pttl: Result<RedisReply, RedisError>, repaired: inout Bool
    ) throws -> Result<Decision, GateError> {
        let request = SendRequest(phone: try PhoneNumber(parsing: "+8613800138000"), purpose: .default)
        let cipher = CountdownTokenCipher(secret: Array("secret of these tests".utf8))
        var repairs = 0
        let outcome = GateWorker.cooldownDecision(
            set: set, pttl: pttl, request: request, policy: CompiledPolicy(Policy()), milliseconds: 60_000,
            nonce: nonce, token: { value in
                CooldownNonce(text: Substring(value)).map { cipher.seal(purpose: .default, number: "+8613800138000", nonce: $0) }
            }, repair: { repairs += 1 })
        repaired = repairs == 1
        return outcome
    }

    @Test func noRunningCooldownAllowsWithTheFreshNoncesToken() throws {
        var repaired = false
        let decision = try Self.decide(.success(.null), .success(.integer(60_000)), repaired: &repaired).get()
        #expect(decision.allowed && decision.retryAfterMilliseconds == 60_000 && decision.sendsInWindow == 1)
        let cipher = CountdownTokenCipher(secret: Array("secret of these tests".utf8))
        #expect(cipher.open(try #require(decision.countdownToken))?.cooldownValue == Self.nonce.text)
        #expect(!repaired)
    }

    @Test func aRunningCooldownRefusesWithItsRemainingTimeAndToken() throws {
        var repaired = false
        let set: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        let decision = try Self.decide(set, .success(.integer(41_234)), repaired: &repaired).get()
        #expect(!decision.allowed && decision.reason == .cooldown && decision.retryAfterMilliseconds == 41_234)
        let cipher = CountdownTokenCipher(secret: Array("secret of these tests".utf8))
        #expect(cipher.open(try #require(decision.countdownToken))?.cooldownValue == Self.running.text)
        // A value the gate did not write (another program's, an old 22-character token): no token.
        let foreign = try Self.decide(.success(.bulk(Array("x".utf8))), .success(.integer(5)), repaired: &repaired).get()
        #expect(!foreign.allowed && foreign.countdownToken == nil)
    }

    @Test func aKeyWithoutExpiryIsRepairedAndWaitsTheCooldown() throws {
        var repaired = false
        let set: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        let decision = try Self.decide(set, .success(.integer(-1)), repaired: &repaired).get()
        #expect(!decision.allowed && decision.retryAfterMilliseconds == 60_000 && repaired)
    }

    @Test func aCooldownThatEndedBetweenTheTwoCommandsWaitsOneMillisecond() throws {
        var repaired = false
        let set: Result<RedisReply, RedisError> = .success(.bulk(Array(Self.running.text.utf8)))
        let decision = try Self.decide(set, .success(.integer(-2)), repaired: &repaired).get()
        #expect(!decision.allowed && decision.retryAfterMilliseconds == 1 && !repaired)
    }

    /// Redis refusing the write (out of memory, a read-only replica) or the connection
    /// failing is never an allowed send, whatever the PTTL said.
    @Test(arguments: [
        RedisError(.server, "OOM command not allowed when used memory > 'maxmemory'."),
        RedisError(.server, "READONLY You can't write against a read only replica."),
        RedisError(.unavailable, "not connected to Redis"),
    ])
    func aRefusedWriteIsStoreUnavailable(error: RedisError) throws {
        var repaired = false
        let outcome = try Self.decide(.failure(error), .success(.integer(-2)), repaired: &repaired)
        guard case .failure(let failure) = outcome else { Issue.record("decided: \(outcome)"); return }
        #expect(failure.code == "store_unavailable")
        // An unexpected reply type is a failure too, never a decision.
        let odd = try Self.decide(.success(.integer(1)), .success(.integer(5)), repaired: &repaired)
        guard case .failure = odd else { Issue.record("decided: \(odd)"); return }
    }
}
