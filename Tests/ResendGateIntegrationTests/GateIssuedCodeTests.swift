import Foundation
import GateRuntime
import RedisClient
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 35: codes the gate issues and checks. Each rule tried as the attacker would: many
/// checks at once, a used code again, a voided or expired one, checks after the cooldown
/// (the old lockout's gap), outcome reports that would forge a conversion, and a dump of
/// Redis read for the code.
@Suite("Gate: codes it issues, keeps sealed and checks", .ownThread)
struct GateIssuedCodeTests {
    static let secret = "a code secret of the tests' own"
    static let codes = IssuedCodes()
    static let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 3, codes: codes)

    /// A gate deciding `policy` for every test purpose, with the code secret and `testCode`.
    static func gate(
        _ redis: RedisServer, policy: Policy = policy, secret: String = secret, testNumbers: TestNumbers = .none, testCode: String? = nil
    ) throws -> Gate {
        let configuration = try GateConfiguration(
            redis: try RedisConfiguration(url: redis.url, connectTimeout: liveGateTimeout, commandTimeout: liveGateTimeout),
            policies: PolicySet(fallback: policy, plainPurposes: TestPurposes.names), defaultRegion: "CN",
            testNumbers: testNumbers, codeSecret: secret, testCode: testCode)
        return Gate(configuration: configuration)
    }

    static func check(_ gate: Gate, _ code: String, phone: String = number, purpose: String = "default") async -> Result<CodeCheck, GateError> {
        do throws(GateError) {
            return .success(try await gate.check(phone: phone, purpose: purpose, code: code))
        } catch {
            return .failure(error)
        }
    }

    /// A code of the same length that is not `code`.
    static func wrong(_ code: String) -> String {
        String(code.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) })
    }

    static func kind(_ result: Result<CodeCheck, GateError>) -> GateError.Kind? {
        if case .failure(let error) = result { return error.kind }
        return nil
    }

    @Test func anAllowedSendCarriesItsCodeAndARefusedOneNone() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let sent = try await gate.reserve(phone: number)
            let issued = try #require(sent.issuedCode)
            #expect(sent.allowed && issued.code.count == 6 && issued.code.allSatisfy(\.isNumber))
            #expect(!issued.resent && issued.countdownToken != nil)
            let lifetime = issued.expiresAtMilliseconds - sent.serverTimeMilliseconds
            #expect(abs(lifetime - 600_000) < 2_000, "lifetime \(lifetime)")
            let refused = try await gate.reserve(phone: number)
            #expect(!refused.allowed && refused.issuedCode == nil)
            // A purpose of a policy without codes answers as before: no code, no code key.
            let plainGate = try makeGate(url: redis.url)
            let other = try await plainGate.reserve(phone: "+8613800138001")
            #expect(other.allowed && other.issuedCode == nil)
            #expect(try redis.client().keys("rg:{*:+8613800138001}:code").isEmpty)
        }
    }

    /// The right code is valid once; a second check of it is `code_used`.
    @Test func theRightCodeIsValidOnce() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            #expect(try await gate.check(phone: number, code: code).phone.e164 == number)
            #expect(Self.kind(await Self.check(gate, code)) == .codeUsed)
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .codeUsed)
        }
    }

    /// Wrong codes count against the code: the attempts left go down, the last one locks
    /// it, and then not even the right code passes.
    @Test func wrongCodesCountAndTheLastLocksTheCode() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            #expect(await Self.check(gate, Self.wrong(code)) == .failure(.wrongCode(attemptsLeft: 2)))
            #expect(await Self.check(gate, Self.wrong(code)) == .failure(.wrongCode(attemptsLeft: 1)))
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .codeLocked)
            #expect(Self.kind(await Self.check(gate, code)) == .codeLocked)
            // The number may be sent a new code once its cooldown ends, with its own attempts.
            try redis.client().runOut(cooldownKey())
            let next = try #require(try await gate.reserve(phone: number).issuedCode)
            #expect(!next.resent)
            #expect(await Self.check(gate, Self.wrong(next.code)) == .failure(.wrongCode(attemptsLeft: 2)))
            #expect(try await gate.check(phone: number, code: next.code).phone.e164 == number)
        }
    }

    /// Fifty checks of the right code at once: exactly one is valid, the rest `code_used`.
    @Test func fiftyConcurrentRightChecksHaveExactlyOneValid() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            let answers = await withTaskGroup(of: Result<CodeCheck, GateError>.self) { group in
                for _ in 0..<50 { group.addTask { await Self.check(gate, code) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { (try? $0.get()) != nil }.count == 1)
            #expect(answers.filter { Self.kind($0) == .codeUsed }.count == 49)
        }
    }

    /// Fifty wrong checks at once: exactly the attempts the code has are counted.
    @Test func fiftyConcurrentWrongChecksCountExactlyTheAttempts() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis, policy: Policy(ladder: [.seconds(60)], maxFailedChecks: 5, codes: Self.codes))
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            let answers = await withTaskGroup(of: Result<CodeCheck, GateError>.self) { group in
                for _ in 0..<50 { group.addTask { await Self.check(gate, Self.wrong(code)) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let left = answers.compactMap { result -> Int? in
                if case .failure(let error) = result, error.kind == .wrongCode { return error.attemptsLeft }
                return nil
            }
            #expect(left.sorted() == [1, 2, 3, 4])
            #expect(answers.filter { Self.kind($0) == .codeLocked }.count == 46)
            #expect(Self.kind(await Self.check(gate, code)) == .codeLocked)
        }
    }

    /// The lockout's gap closes: the gate knows the code for its whole lifetime, so wrong
    /// checks after the cooldown ended still count and still lock it.
    @Test func checksAfterTheCooldownStillCount() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            try redis.client().runOut(cooldownKey())
            #expect(await Self.check(gate, Self.wrong(code)) == .failure(.wrongCode(attemptsLeft: 2)))
            #expect(await Self.check(gate, Self.wrong(code)) == .failure(.wrongCode(attemptsLeft: 1)))
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .codeLocked)
            #expect(Self.kind(await Self.check(gate, code)) == .codeLocked)
        }
    }

    /// A code past its lifetime is refused, the key gone or not; so is a number never sent one.
    @Test func anExpiredCodeIsRefused() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            #expect(Self.kind(await Self.check(gate, "123456")) == .codeExpired)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            let client = try redis.client()
            // Ten minutes less a second: still live.
            try client.advanceTime(byMilliseconds: 599_000)
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .wrongCode)
            try client.advanceTime(byMilliseconds: 1_000)
            #expect(Self.kind(await Self.check(gate, code)) == .codeExpired)
        }
    }

    /// A record whose expiry has passed is expired, even while its key lives (the gate's
    /// clock may run ahead of the key's TTL): the check reads the deadline, not only the key.
    @Test func aPassedDeadlineIsExpiredWhileTheKeyLives() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            let client = try redis.client()
            let key = gateKey(.code, number)
            let stored = try #require(try client.command("GET", key).string)
            let past = String(format: "%012llx", UInt64(Date().timeIntervalSince1970 * 1000) - 1_000)
            let moved = String(stored.prefix(16)) + past + String(stored.dropFirst(28))
            #expect(try client.command("SET", key, moved, "KEEPTTL") == .simpleString("OK"))
            #expect(Self.kind(await Self.check(gate, code)) == .codeExpired)
            // And a send after the cooldown issues a fresh code: the dead one is not sent again.
            try client.runOut(cooldownKey())
            let next = try #require(try await gate.reserve(phone: number).issuedCode)
            #expect(!next.resent)
        }
    }

    /// A live code about to expire (under a tenth of its lifetime left) is not sent again, on
    /// either path: the send issues a new one the user has time to type.
    @Test func aCodeAboutToExpireIsNotSentAgain() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let client = try redis.client()
            for (phone, key) in [("+8613800138000", nil), ("+8613800138001", "dying-1")] as [(String, String?)] {
                let first = try #require(try await gate.reserve(phone: phone, idempotencyKey: key).issuedCode)
                // 9.5 of its 10 minutes pass (the cooldown ends too).
                try client.advanceTime(byMilliseconds: 570_000)
                let next = try #require(try await gate.reserve(phone: phone, idempotencyKey: key.map { $0 + "b" }).issuedCode)
                // Not the old code (its expiry now 9.5 minutes nearer): a new one, its whole lifetime ahead.
                #expect(!next.resent && next.code != first.code || next.expiresAtMilliseconds > first.expiresAtMilliseconds - 60_000,
                        "\(phone): \(first) then \(next)")
                #expect(!next.resent, "\(phone)")
            }
        }
    }

    /// A resend within the lifetime sends the same code by default (its wrong checks carry
    /// on); with `fresh`, a new one that voids the old.
    @Test func aResendSendsTheSameCodeOrAFreshOne() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let first = try #require(try await gate.reserve(phone: number).issuedCode)
            #expect(await Self.check(gate, Self.wrong(first.code)) == .failure(.wrongCode(attemptsLeft: 2)))
            // Time moves on by the cooldown: the code's expiry is that much nearer (stamps move back).
            let moved = Int64(try redis.client().runOut(cooldownKey()))
            let again = try #require(try await gate.reserve(phone: number).issuedCode)
            #expect(again.code == first.code && again.resent && again.expiresAtMilliseconds == first.expiresAtMilliseconds - moved)
            #expect(await Self.check(gate, Self.wrong(first.code)) == .failure(.wrongCode(attemptsLeft: 1)))

            var freshCodes = Self.codes
            freshCodes.onResend = .fresh
            let fresh = try Self.gate(redis, policy: Policy(ladder: [.seconds(60)], maxFailedChecks: 3, codes: freshCodes))
            let old = try #require(try await fresh.reserve(phone: number, purpose: "login").issuedCode)
            try redis.client().runOut(cooldownKey(purpose: "login"))
            let new = try #require(try await fresh.reserve(phone: number, purpose: "login").issuedCode)
            #expect(!new.resent && new.expiresAtMilliseconds >= old.expiresAtMilliseconds)
            if new.code != old.code {
                #expect(Self.kind(await Self.check(fresh, old.code, purpose: "login")) == .wrongCode)
            }
            #expect((try? await Self.check(fresh, new.code, purpose: "login").get()) != nil)
        }
    }

    /// A refund (the SMS provider failed) voids the code: checks say so, and the next send
    /// issues a fresh one, even under `same`.
    @Test func aRefundVoidsTheCode() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            #expect(try await gate.release(phone: number))
            #expect(Self.kind(await Self.check(gate, code)) == .codeVoided)
            let next = try #require(try await gate.reserve(phone: number).issuedCode)
            #expect(!next.resent)
            #expect((try? await Self.check(gate, next.code).get()) != nil)
        }
    }

    /// An idempotent retry replays the same code, and stores it sealed like the key does.
    @Test func aReplayCarriesTheSameCode() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let first = try await gate.reserve(phone: number, idempotencyKey: "retry-1")
            let replay = try await gate.reserve(phone: number, idempotencyKey: "retry-1")
            #expect(replay.replayed && replay.issuedCode?.code == first.issuedCode?.code && first.issuedCode != nil)
            #expect(replay.issuedCode?.resent == false)
        }
    }

    /// Nothing in Redis holds the code in clear, and a gate with another secret cannot open
    /// what is there: its resend sends a fresh code instead (never 503 until the old expires).
    @Test func redisHoldsNoCodeInClear() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            let sent = try await gate.reserve(phone: number, idempotencyKey: "dump-1")
            let code = try #require(sent.issuedCode).code
            let client = try redis.client()
            for key in try client.keys("*") {
                guard let value = try client.command("GET", key).string else { continue }
                #expect(!value.contains(code), "\(key) holds the code")
            }
            let stored = try #require(try client.command("GET", gateKey(.code, number)).string)
            let record = try #require(CodeRecord(text: Substring(stored)))
            #expect(record.state == "00" && record.wrongChecks == 0)
            #expect(record.expiresAtMilliseconds == sent.issuedCode?.expiresAtMilliseconds)
            try client.runOut(cooldownKey())
            let stranger = try Self.gate(redis, secret: "another deployment's secret")
            let fresh = try #require(try await stranger.reserve(phone: number).issuedCode)
            #expect(!fresh.resent)
            #expect((try? await Self.check(stranger, fresh.code).get()) != nil)
            #expect(Self.kind(await Self.check(gate, code)) == .codeUsed)
        }
    }

    /// For a purpose whose codes the gate checks, outcome reports are refused, so no report
    /// can forge or double a conversion; a check for a purpose without codes is refused too.
    @Test func outcomeReportsAreRefusedWhereTheGateChecks() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis)
            _ = try await gate.reserve(phone: number)
            for outcome in VerificationOutcome.allCases {
                let error = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: outcome) }
                #expect(error?.kind == .codesIssued)
            }
            var policies = PolicySet(fallback: .default, purposes: ["login": Self.policy])
            policies.plainPurposes = ["other"]
            let mixed = Gate(configuration: try GateConfiguration(
                redis: try RedisConfiguration(url: redis.url), policies: policies, defaultRegion: "CN", codeSecret: Self.secret))
            #expect(Self.kind(await Self.check(mixed, "123456", purpose: "other")) == .codesNotIssued)
            #expect(try await mixed.reserve(phone: number, purpose: "login").issuedCode != nil)
            #expect(try await mixed.reserve(phone: number, purpose: "other").issuedCode == nil)
        }
    }

    /// Scope `number`: the last wrong check locks the number's sends for the lockout.
    @Test func theNumberScopeLockLocksSends() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis, policy: Policy(ladder: [.seconds(60)], maxFailedChecks: 2, lockoutScope: .number, codes: Self.codes))
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .wrongCode)
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .locked)
            #expect(try await gate.reserve(phone: number).reason == .locked)
            #expect(Self.kind(await Self.check(gate, code)) == .locked)
        }
    }

    /// Test numbers get the operator's fixed code, nothing recorded; checks of it pass.
    @Test func testNumbersGetTheFixedCode() async throws {
        try await withRedis { redis in
            let gate = try Self.gate(redis, testNumbers: try TestNumbers(parsing: "+15005550006"), testCode: "424242")
            let sent = try await gate.reserve(phone: "+15005550006")
            #expect(sent.testNumber && sent.issuedCode?.code == "424242")
            #expect((try? await Self.check(gate, "424242", phone: "+15005550006").get())?.testNumber == true)
            #expect((try? await Self.check(gate, "424242", phone: "+15005550006").get())?.testNumber == true)
            #expect(Self.kind(await Self.check(gate, "424243", phone: "+15005550006")) == .wrongCode)
            #expect(try redis.client().keys("*").filter { !$0.hasSuffix("token-secret") }.isEmpty)
        }
    }

    /// Issued codes without a secret do not start.
    @Test func codesWithoutASecretAreAStartUpError() throws {
        let error = #expect(throws: ConfigurationError.self) {
            _ = try GateConfiguration(redis: try RedisConfiguration(url: "redis://127.0.0.1:1/0"), policies: PolicySet(fallback: Self.policy))
        }
        #expect(error?.field == "code-secret")
        #expect(throws: ConfigurationError.self) {
            _ = try GateConfiguration(
                redis: try RedisConfiguration(url: "redis://127.0.0.1:1/0"), policies: PolicySet(fallback: Self.policy), codeSecret: "short")
        }
        var noLockout = Self.policy
        noLockout.maxFailedChecks = 0
        #expect(throws: ConfigurationError.self) { try noLockout.lint() }
        // A code's record counts wrong checks in two digits.
        noLockout.maxFailedChecks = 100
        #expect(throws: ConfigurationError.self) { try noLockout.lint() }
        noLockout.maxFailedChecks = 99
        try noLockout.lint()
    }
}

extension GateIssuedCodeTests {
    /// The pumping guard's conversion comes from checks alone: a right check counts once for
    /// its code (a second use counts nothing), wrong ones count nothing, and no outcome
    /// report can add to it.
    @Test func aRightCheckCountsTowardConversionOnce() async throws {
        try await withRedis { redis in
            var policy = Self.policy
            policy.pumping = PumpingGuard(minSends: 1_000_000, window: .seconds(3600), prefixDigits: 4)
            let gate = try Self.gate(redis, policy: policy)
            let client = try redis.client()
            let prefixKey = GateKeys(prefix: "rg").pumping(purpose: .default, prefix: PrefixKey(try gate.canonical(number), digits: 4))
            func conversions() throws -> Int {
                let fields = try client.command("HGETALL", prefixKey).array?.compactMap(\.string) ?? []
                return stride(from: 0, to: fields.count - 1, by: 2).filter { fields[$0].hasPrefix("v:") }.reduce(0) { $0 + (Int(fields[$1 + 1]) ?? 0) }
            }
            let code = try #require(try await gate.reserve(phone: number).issuedCode).code
            #expect(Self.kind(await Self.check(gate, Self.wrong(code))) == .wrongCode)
            #expect(try conversions() == 0)
            #expect((try? await Self.check(gate, code).get()) != nil)
            #expect(try conversions() == 1)
            #expect(Self.kind(await Self.check(gate, code)) == .codeUsed)
            let report = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .verified) }
            #expect(report?.kind == .codesIssued)
            #expect(try conversions() == 1)
            // Another number of the prefix converts too: two in all.
            let other = "+8613800138123"
            let second = try #require(try await gate.reserve(phone: other).issuedCode).code
            #expect((try? await Self.check(gate, second, phone: other).get()) != nil)
            #expect(try conversions() == 2)
        }
    }
}
