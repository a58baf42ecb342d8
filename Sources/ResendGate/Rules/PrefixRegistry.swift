import RedisClient

/// The registry of blocked prefixes (`rg:pump:blocked`) that `GET /v1/prefixes` reads. A
/// prefix is written when found blocked, then at most once a bucket (a tenth of the
/// window): rare writes, so the one key is not hot even on a cluster. Each write trims it
/// to the longest pumping window and the `capacity` newest members: bounded whatever an
/// attack does. The listing reads each member's figures again.
final class PrefixRegistry {
    /// The most prefixes the registry keeps (the newest ones) and the listing returns.
    static let capacity = 1000

    private let context: GateContext
    /// The listing being read, shared by the callers meanwhile.
    private let listing = SharedRead<[PrefixFigures]>(overflow: .storeUnavailable("too many listings waiting"))
    /// The longest pumping window of the purposes whose guard is on.
    private let longestWindowMilliseconds: Int64

    init(context: GateContext) {
        self.context = context
        longestWindowMilliseconds = context.compiled.values.filter { $0.rules.pumping.isOn }
            .map { $0.rules.pumping.window.wholeMilliseconds }.max() ?? 0
    }

    /// `purpose:+447911:44`: a registry member (purpose, prefix, calling code).
    static func member(purpose: Purpose, prefix: PrefixKey) -> String {
        purpose.name + ":" + prefix.text + ":" + String(prefix.callingCode)
    }

    /// Puts a blocked prefix in the registry and trims it; not awaited (a lost write costs
    /// the report one entry until the next bucket).
    func register(purpose: Purpose, prefix: PrefixKey, now: Int64) {
        let store = context.store
        let key = context.keys.blockedPrefixes
        let member = Self.member(purpose: purpose, prefix: prefix)
        let oldest = now - longestWindowMilliseconds
        store.send(slotKey: key, { $0.append("ZADD", key, Int(now), member) }, completion: { _ in })
        store.send(slotKey: key, { $0.append("ZREMRANGEBYSCORE", key, "-inf", "(" + String(oldest)) }, completion: { _ in })
        store.send(slotKey: key, { $0.append("ZREMRANGEBYRANK", key, 0, -(Self.capacity + 1)) }, completion: { _ in })
    }

    /// The prefixes blocked now, sorted by purpose and prefix: each member read again (one
    /// `pumping.lua` call each). One listing in flight per worker, shared by its callers,
    /// so a burst of listings cannot multiply the up to 1 000 reads.
    func blocked(completion: @escaping (Result<[PrefixFigures], GateError>) -> Void) {
        listing.run(completion) { [unowned self] answer in self.read(completion: answer) }
    }

    private func read(completion: @escaping (Result<[PrefixFigures], GateError>) -> Void) {
        let key = context.keys.blockedPrefixes
        context.store.send(slotKey: key, { args in
            args.append("ZREVRANGE", key, 0, Self.capacity - 1)
        }, completion: { [unowned self] result in
            let read = GateContext.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply else { throw GateContext.unexpected(reply) }
                return items.compactMap { self.registryEntry($0.string) }
            }
            guard case .success(let members) = read, !members.isEmpty else { return completion(read.map { _ in [] }) }
            // The replies as they arrive, on the worker's loop: the blocked ones, or the first failure.
            var waiting = members.count
            var found: [PrefixFigures] = []
            var failure: GateError?
            for (purpose, prefix, rules) in members {
                self.step("read", purpose: purpose, prefix: prefix, rules: rules) { step in
                    switch step {
                    case .success(let read) where read.figures.blocked: found.append(read.figures)
                    case .success: break
                    case .failure(let error): failure = failure ?? error
                    }
                    waiting -= 1
                    guard waiting == 0 else { return }
                    if let failure { return completion(.failure(failure)) }
                    completion(.success(found.sorted { ($0.purpose.name, $0.prefix.text) < ($1.purpose.name, $1.prefix.text) }))
                }
            }
        })
    }

    /// One call of `pumping.lua` on the prefix's slot (the guard's steps, the listing's
    /// reads), its reply read; a prefix it finds due is put in the registry.
    func step(
        _ mode: String, purpose: Purpose, prefix: PrefixKey, rules: PumpingGuard, field: String = "",
        completion: @escaping (Result<PumpingStep, GateError>) -> Void
    ) {
        let keys = context.keys, slotKey = keys.prefixSlotKey(purpose: purpose, prefix: prefix)
        let call = ScriptCall(script: GateScripts.pumping, slotKey: slotKey, arguments: { args in
            args.append(1)
            keys.appendPumping(purpose: purpose, prefix: prefix, to: &args)
            args.append(mode, Int(rules.window.wholeMilliseconds), Int(rules.bucketMilliseconds), rules.minSends ?? 1)
            args.append(rules.minConversionPartsPerMillion, field)
            args.appendRedisNow()
        }, decode: { reply throws(GateError) in try PumpingStep(reply, purpose: purpose, prefix: prefix) })
        context.store.run(call) { [unowned self] step in
            if case .success(let value) = step, value.register {
                self.register(purpose: purpose, prefix: prefix, now: value.figures.serverTimeMilliseconds)
            }
            completion(step)
        }
    }

    /// A registry member of a purpose whose guard is on, with that guard; nil otherwise.
    private func registryEntry(_ member: String?) -> (Purpose, PrefixKey, PumpingGuard)? {
        guard let parts = member?.split(separator: ":", omittingEmptySubsequences: false), parts.count == 3,
              let purpose = try? Purpose(String(parts[0])), let policy = context.compiled[purpose.name], policy.rules.pumping.isOn,
              let code = Int(parts[2]), let prefix = PrefixKey(text: String(parts[1]), callingCode: code)
        else { return nil }
        return (purpose, prefix, policy.rules.pumping)
    }
}
