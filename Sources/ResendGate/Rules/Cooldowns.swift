#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import GateEventLoop
import RedisClient

/// The default policy (one cooldown, nothing counted) in one command, without a script:
/// `SET <cooldown> <nonce><deadline> NX PX <ms> GET`. SET NX is atomic, so of N racing
/// requests for a number exactly one finds no key and is allowed; the others get the
/// running cooldown's value: its nonce, for their token, and its deadline, from which the
/// wait follows by this gate's clock. Redis spends about what a pipelined SET costs it
/// (`deploy/dev/bench --only cost`).
///
/// The deadline is the allowing gate's clock; gates are assumed to keep theirs in step
/// (NTP); the reserve script writes the same value by Redis's clock. A deadline that is not
/// within the cooldown ahead of this gate's clock (give or take `clockSkewAllowance`; or a
/// value without one: a lock, a key an older version wrote) is not trusted: then a `PTTL`
/// asks Redis, as a second command. `server_time` is the gate's clock too:
/// Redis's `TIME` was only a stamp there, it never decided.
///
/// The rule owns where gates keep cooldowns (`WindowCooldowns`): a purpose's policy with a
/// window keeps them in its window key, read by the reserve script, once that is safe.
final class Cooldowns {
    /// How far another gate's clock may be ahead or behind before its deadlines are not trusted.
    static let clockSkewAllowance: Int64 = 1_000

    private let context: GateContext
    /// Where gates keep cooldowns: the reserve script keeps them in windows while
    /// `keepsCooldownsInWindows()`, a plain decision waits for its first read.
    let windows: WindowCooldowns

    init(loop: EventLoop, context: GateContext) {
        self.context = context
        let configuration = context.configuration
        windows = WindowCooldowns(
            loop: loop, store: context.store, key: context.keys.windowCooldowns, period: configuration.windowCooldownsPeriod,
            windowed: configuration.cooldownsInWindows
                ? context.compiled.filter { $0.value.windowMilliseconds > 0 }.map { ($0.key, $0.value.longestHoldMilliseconds) } : [])
        // At once, not at the first decision: the warm-up of a gate with a window runs from
        // here, for every worker of a server alike.
        windows.start()
    }

    func close() { windows.close() }

    /// Decides the request with one `SET NX` when its policy is one plain cooldown and no
    /// gate keeps the purpose's cooldowns in windows (then true); false when the reserve
    /// script must decide.
    func reservePlainly(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, codes: IssuedCodeRule,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) -> Bool {
        guard let milliseconds = policy.plainCooldownMilliseconds, windows.plainDecisionIsSafe(for: request.purpose.name) else { return false }
        let number = context.number(request.phone)
        let purpose = request.purpose
        let context = self.context
        let store = context.store
        let keys = context.keys
        let nonce = context.tokens.next()
        let slotKey = keys.slotKey(purpose: purpose, number: number)
        let now = Decision.wallClockMilliseconds()
        let value = CooldownValue(nonce: nonce, deadlineMilliseconds: now + milliseconds)
        let token = { (nonce: CooldownNonce) in cipher.seal(purpose: purpose, number: number, nonce: nonce) }
        store.send(slotKey: slotKey, { args in
            args.append("SET")
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            value.append(to: &args)
            args.append("NX", "PX", Int(milliseconds), "GET")
        }, completion: { set in
            let decide = { (pttl: Result<RedisReply, RedisError>?) in
                Self.decision(
                    set: set, pttl: pttl, now: now, request: request, milliseconds: milliseconds, nonce: nonce, token: token
                ) {
                    // A cooldown key without an expiry (never written so by the gate): give it
                    // the policy's cooldown, as the script did, unless it has one by now.
                    store.send(slotKey: slotKey, { args in
                        args.append("PEXPIRE")
                        keys.append(.cooldown, purpose: purpose, number: number, to: &args)
                        args.append(Int(milliseconds), "NX")
                    }, completion: { _ in })
                }
            }
            if let outcome = decide(nil) {
                // A purpose that issues codes: an allowed send's code, stored next (`IssuedCodeRule.store`).
                return codes.store(outcome, policy: policy, number: number, now: now, cipher: cipher) {
                    context.awaitReplicas(for: $0, slotKey: slotKey, completion: completion)
                }
            }
            store.send(slotKey: slotKey, { args in
                args.append("PTTL")
                keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            }, completion: { pttl in
                // `decide` with a PTTL reply always decides (a refusal: no code).
                context.awaitReplicas(for: decide(pttl) ?? .failure(.storeUnavailable("no decision")), slotKey: slotKey, completion: completion)
            })
        })
        return true
    }

    /// The decision the SET's reply makes, with the PTTL's reply when one was needed; nil
    /// when it is needed (`pttl` nil and the running value carries no deadline to trust).
    /// `now` is this gate's clock when the SET was sent. A refused SET (Redis out of memory,
    /// a read-only replica, a lost connection) is never an allowed send.
    static func decision(
        set: Result<RedisReply, RedisError>, pttl: Result<RedisReply, RedisError>?, now: Int64, request: SendRequest,
        milliseconds: Int64, nonce: CooldownNonce, token: (CooldownNonce) -> CountdownToken?, repair: () -> Void
    ) -> Result<Decision, GateError>? {
        let running: CooldownValue?
        var locked = false
        switch set {
        case .failure(let error): return .failure(.store(error))
        case .success(.null):
            return .success(Decision(request, wait: milliseconds, now: now, next: milliseconds, sendsInWindow: 1, token: token(nonce)))
        case .success(.bulk(let bytes)):
            // `locked` (verify.lua): wrong codes lock the number in place of its cooldown.
            locked = bytes.starts(with: "locked".utf8)
            running = CooldownValue(text: Substring(String(decoding: bytes, as: UTF8.self)))
        case .success(let reply): return .failure(GateContext.unexpected(reply))
        }
        let remaining: Int64
        if let deadline = running?.deadlineMilliseconds, deadline - now > 0,
           deadline - now <= milliseconds + clockSkewAllowance {
            remaining = deadline - now
        } else {
            switch pttl {
            case nil: return nil
            case .failure(let error)?: return .failure(.store(error))
            case .success(.integer(let value))? where value > 0: remaining = Int64(value)
            case .success(.integer(-1))?:
                repair()
                remaining = milliseconds
            // The cooldown ended between the SET and the PTTL: a send may go in a moment.
            case .success(.integer)?: remaining = 1
            case .success(let reply)?: return .failure(GateContext.unexpected(reply))
            }
        }
        return .success(Decision(
            request, refusedBy: locked ? .locked : .cooldown, wait: remaining, now: now, next: milliseconds,
            token: running.flatMap { token($0.nonce) }))
    }
}

extension Decision {
    /// This machine's wall clock in ms since 1970 (`server_time` and deadlines of a plain cooldown).
    static func wallClockMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
