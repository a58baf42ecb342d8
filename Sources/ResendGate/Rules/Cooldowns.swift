#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import GateEventLoop
import RedisClient

/// The default policy (one cooldown, nothing counted) in one command, without a script:
/// `SET <cooldown> <nonce><deadline> NX PX <ms> GET`, about what a pipelined SET costs
/// Redis. Of N racing requests exactly one finds no key and is allowed; the others get the
/// running cooldown's nonce, for their token, and its deadline, for their wait.
///
/// The deadline is the allowing gate's clock (gates keep theirs in step: NTP; the reserve
/// script writes Redis's as its connection reckons it, up to 25 ms off). A deadline not
/// within the cooldown ahead of this gate's clock, or none (a lock, an older version's key),
/// is not trusted: a `PTTL` asks Redis. One further ahead was written on a clock ahead of
/// this one, or is a longer cooldown's (a policy change): only Redis knows which, and a
/// refusal never tells a wait longer than the cooldown. `server_time` is the gate's clock too.
///
/// The rule owns where gates keep cooldowns (`WindowCooldowns`).
final class Cooldowns {
    private let context: GateContext
    /// Where gates keep cooldowns.
    let windows: WindowCooldowns

    init(loop: EventLoop, context: GateContext) {
        self.context = context
        let configuration = context.configuration
        windows = WindowCooldowns(
            loop: loop, store: context.store, key: context.keys.windowCooldowns, period: configuration.windowCooldownsPeriod,
            windowed: configuration.cooldownsInWindows
                ? context.compiled.filter { $0.value.windowMilliseconds > 0 }.map { ($0.key, $0.value.longestHoldMilliseconds) } : [])
        // At once, not at the first decision: every worker's warm-up runs from here.
        windows.start()
    }

    func close() { windows.close() }

    /// Decides with one `SET NX` (true) when the policy is one plain cooldown and no gate
    /// keeps the purpose's cooldowns in windows; false when the reserve script must.
    func reservePlainly(
        _ send: StepSend, codes: IssuedCodeRule, completion: @escaping (Result<Decision, GateError>) -> Void
    ) -> Bool {
        let request = send.request, policy = send.policy, cipher = send.cipher, number = send.number
        guard let milliseconds = policy.plainCooldownMilliseconds, windows.plainDecisionIsSafe(for: request.purpose.name) else { return false }
        let purpose = request.purpose
        let context = self.context, store = context.store, keys = context.keys
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
                    // A cooldown key without an expiry (the gate never writes one): give it
                    // the policy's cooldown, unless it has one by now.
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

    /// The decision of the SET's reply (and the PTTL's, when needed); nil when a PTTL is
    /// needed. `now` is this gate's clock at the SET. A refused SET is never an allowed send.
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
        // Beyond the cooldown ahead, the key may end sooner than the deadline says: PTTL.
        if let deadline = running?.deadlineMilliseconds, deadline - now > 0, deadline - now <= milliseconds {
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

/// In the number's script: a running cooldown or lock refuses (`cooldown-check.lua`); an
/// allowed send's cooldown is its ladder step (`ladder-hold.lua`); its cooldown and the
/// window's sends are written in one key (`cooldown-write.lua`).
extension Cooldowns: NumberRule {
    static let parts: [RuleSlot: String] = [.check: "cooldown-check", .hold: "ladder-hold", .write: "cooldown-write"]

    static func block(_ script: ReserveVariant) -> String {
        let policy = script.policy, ladder = policy.ladderMilliseconds
        let keepSends = max(policy.rules.maxSends ?? 0, ladder.count, 16)
        // A number's first send and the step after it, the most frequent, without a call of `step`.
        let first = ladder.first ?? 0, second = ladder.dropFirst().first ?? first
        return """
            local window, windowLifeText, keepSends = \(policy.windowMilliseconds), '\(policy.longestHoldMilliseconds)', \(keepSends)
            local cooldownInWindow, longest, steps = \(script.cooldownInWindow), \(policy.longestHoldMilliseconds), \(ladder.count)
            local watchCooldown = \(policy.rules.observes(.cooldown))
            local function step(i) return (select(i, \(ladder.map { "'\($0)'" }.joined(separator: ", ")))) end
            local firstHold, firstHoldMs, secondHold = '\(first)', \(first), '\(second)'

            """
    }
}
