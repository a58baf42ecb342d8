#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import RedisClient

/// The default policy (one cooldown, nothing counted) without a script: one
/// `SET <cooldown> <nonce> NX PX <ms> GET` and a `PTTL <cooldown>` written together
/// (pipelined). SET NX is atomic, so of N racing requests for a number exactly one
/// finds no key and is allowed; the others get the running cooldown's value (its
/// nonce, for their token) and its remaining time from the PTTL that Redis ran right
/// after. Redis spends about a third of what a script call cost it (`deploy/bench
/// --only cost`). The answer's `server_time` is the gate's own clock: Redis's `TIME`
/// was only a stamp there, it never decided.
extension GateWorker {
    func reserveCooldown(
        _ request: SendRequest, policy: CompiledPolicy, number: String, nonce: CooldownNonce, milliseconds: Int64,
        cipher: CountdownTokenCipher, completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let purpose = request.purpose
        let keys = self.keys
        let slotKey = keys.slotKey(purpose: purpose, number: number)
        let replies = ReplyPair()
        let finish = { [unowned self] in
            let outcome = Self.cooldownDecision(
                set: replies.first!, pttl: replies.second!, request: request, policy: policy, milliseconds: milliseconds,
                nonce: nonce) { old in
                CooldownNonce(text: Substring(old)).map { cipher.seal(purpose: purpose, number: number, nonce: $0) }
            } repair: {
                // A cooldown key without an expiry (never written so by the gate): give it
                // the policy's cooldown, as the script did, unless it has one by now.
                self.store.send(slotKey: slotKey, { args in
                    args.append("PEXPIRE")
                    keys.append(.cooldown, purpose: purpose, number: number, to: &args)
                    args.append(Int(milliseconds))
                    args.append("NX")
                }, completion: { _ in })
            }
            self.awaitReplicas(for: outcome, slotKey: slotKey, completion: completion)
        }
        store.send(slotKey: slotKey, { args in
            args.append("SET")
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            args.append(nonce.text)
            args.append("NX")
            args.append("PX")
            args.append(Int(milliseconds))
            args.append("GET")
        }, completion: { result in
            replies.first = result
            if replies.second != nil { finish() }
        })
        store.send(slotKey: slotKey, { args in
            args.append("PTTL")
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
        }, completion: { result in
            replies.second = result
            if replies.first != nil { finish() }
        })
    }

    /// The decision the two replies make. A refused SET (Redis out of memory, a read-only
    /// replica, a lost connection) is never an allowed send.
    static func cooldownDecision(
        set: Result<RedisReply, RedisError>, pttl: Result<RedisReply, RedisError>, request: SendRequest,
        policy: CompiledPolicy, milliseconds: Int64, nonce: CooldownNonce,
        token: (String) -> CountdownToken?, repair: () -> Void
    ) -> Result<Decision, GateError> {
        let running: String
        switch set {
        case .failure(let error): return .failure(.storeUnavailable(error.description))
        case .success(.null):
            return .success(Decision(
                allowed: true, reason: nil, phone: request.phone, purpose: request.purpose,
                retryAfterMilliseconds: milliseconds, serverTimeMilliseconds: wallClockMilliseconds(), sendsInWindow: 1,
                sendsLeft: nil, nextRetryAfterMilliseconds: milliseconds,
                countdownToken: token(nonce.text)))
        case .success(.bulk(let bytes)): running = String(decoding: bytes, as: UTF8.self)
        case .success(let reply): return .failure(unexpected(reply))
        }
        let remaining: Int64
        switch pttl {
        case .failure(let error): return .failure(.storeUnavailable(error.description))
        case .success(.integer(let value)) where value > 0: remaining = Int64(value)
        case .success(.integer(-1)):
            repair()
            remaining = milliseconds
        // The cooldown ended between the SET and the PTTL: a send may go in a moment.
        case .success(.integer): remaining = 1
        case .success(let reply): return .failure(unexpected(reply))
        }
        return .success(Decision(
            allowed: false, reason: .cooldown, phone: request.phone, purpose: request.purpose,
            retryAfterMilliseconds: remaining, serverTimeMilliseconds: wallClockMilliseconds(), sendsInWindow: 0,
            sendsLeft: nil, nextRetryAfterMilliseconds: milliseconds, countdownToken: token(running)))
    }

    /// This machine's wall clock in ms since 1970 (`server_time` of a plain cooldown).
    static func wallClockMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// The two replies of a pipelined pair, in whichever order they arrive.
private final class ReplyPair {
    var first: Result<RedisReply, RedisError>?
    var second: Result<RedisReply, RedisError>?
}
