import GateEventLoop
import RedisClient

/// The gate on one event loop: turns requests into single script calls on the
/// loop's own Redis connection and replies into decisions. Confined to its loop:
/// call every method on the loop's thread. The HTTP server runs one per worker;
/// `Gate` wraps one for async callers.
public final class GateWorker {
    /// One Redis, the master Sentinels name, or a Redis Cluster (`RedisStore`), behind
    /// the narrow protocol the rules use.
    public var store: any GateStore { context.store }
    public let configuration: GateConfiguration
    /// This worker's own parser and cache, so parsing never contends across loops.
    public let parser: PhoneNumberParser
    /// How this gate's Redis keys are spelled (under `configuration.keyPrefix`).
    public var keys: GateKeys { context.keys }
    /// What the rules share: the store, the keys, the policies.
    let context: GateContext
    /// Seals and opens countdown tokens, once the deployment's secret is known.
    let tokenSecret: TokenSecret
    /// Each configured purpose's reserve scripts, its policy written in (`ReserveScripts`).
    let reserveScripts: [String: ReserveScripts]
    // The rules that own state or take steps of their own; the rest live in the reserve
    // script (`reserve.lua`, `ReserveScripts`) and read their answer in `ReserveAnswer`.
    let cooldowns: Cooldowns
    let refunds: Refunds
    let idempotency: IdempotencyRecords
    let ipCap: IPCap
    let budgets: SendBudgets
    let prefixGuard: PrefixGuard
    let lockout: Lockout
    let codes: IssuedCodeRule
    /// Each client address's requests against `ipMaxRequests`, before Redis (shared by the
    /// server's workers); nil without it.
    let requestLimiter: RequestLimiter?
    /// On a cluster, the sends with steps outside the number's slot (budgets, the pumping
    /// guard) being decided, one at a time per number (`SameNumberQueue`).
    let sameNumber = SameNumberQueue()

    /// The most prefixes the registry of blocked prefixes keeps and the listing returns.
    public static let blockedPrefixCapacity = PrefixRegistry.capacity

    /// `parserCapacity` bounds the worker's cache of parsed numbers (16 384 results, and at
    /// most about 4 MiB whatever the results): enough to hold the numbers of the last
    /// minutes of traffic, where repeats happen. `logger` hears what happens to the Redis
    /// connection (reconnects, master switches, slot re-maps, script reloads), never a number.
    /// `store` makes another store than Redis, given the scripts to load: a test's, or a
    /// second kind of store. `requestLimiter` counts `ipMaxRequests` (the one a server's
    /// workers share); nil: a limiter of this worker's own, when `ipMaxRequests` is set.
    public init(
        loop: EventLoop, configuration: GateConfiguration, parserCapacity: Int = 16_384, logger: GateLogger = .off,
        requestLimiter: RequestLimiter? = nil, store makeStore: (([RedisScript]) -> any GateStore)? = nil
    ) {
        self.configuration = configuration
        parser = PhoneNumberParser(capacity: parserCapacity)
        let fallback = CompiledPolicy(configuration.policies.fallback)
        var compiled = configuration.policies.purposes.mapValues(CompiledPolicy.init)
        for name in configuration.policies.configuredPurposes where compiled[name] == nil { compiled[name] = fallback }
        let longestIPWindow = IPCap.longestWindow(of: compiled)
        reserveScripts = compiled.mapValues {
            ReserveScripts(
                policy: $0, idempotencyLifetimeMilliseconds: configuration.idempotencyLifetime.wholeMilliseconds,
                longestIPWindowMilliseconds: longestIPWindow)
        }
        // Every purpose's reserve scripts are loaded at connect, with the others (purposes
        // of one policy share theirs).
        let scripts = GateScripts.all + Set(reserveScripts.values.flatMap(\.all)).sorted { $0.sha1 < $1.sha1 }
        let store = makeStore?(scripts) ?? RedisStore(loop: loop, configuration: configuration.redis, scripts: scripts, logger: logger)
        context = GateContext(
            store: store, configuration: configuration, keys: GateKeys(prefix: configuration.keyPrefix),
            numberHasher: NumberKeyHasher(secret: configuration.keySecret), compiled: compiled)
        tokenSecret = TokenSecret(given: configuration.tokenSecret, store: store, key: context.keys.tokenSecret)
        cooldowns = Cooldowns(loop: loop, context: context)
        refunds = Refunds(context: context)
        idempotency = IdempotencyRecords(context: context)
        ipCap = IPCap(context: context)
        budgets = SendBudgets(context: context, idempotency: idempotency)
        prefixGuard = PrefixGuard(context: context, idempotency: idempotency)
        lockout = Lockout(context: context, prefixGuard: prefixGuard)
        codes = IssuedCodeRule(context: context, prefixGuard: prefixGuard)
        self.requestLimiter = configuration.ipMaxRequests.map { requestLimiter ?? RequestLimiter(rate: $0) }
    }

    /// Canonicalises `text`: a national spelling is read in `region` (a request's country
    /// picker, ISO 3166 alpha-2, see ``Gate/requestRegion(_:)``) or, without one, in the
    /// configured default region; a spelling with a country code ignores both.
    public func phone(_ text: String, region: String? = nil) throws(GateError) -> PhoneNumber {
        let chosen = try region.map { (code: String) throws(GateError) in try Gate.requestRegion(code) }
        do {
            return try parser.parse(text, defaultRegion: chosen ?? configuration.defaultRegion)
        } catch {
            throw .invalidPhone(error)
        }
    }

    /// `text` as a configured purpose; `invalid_purpose` for a malformed or unconfigured one.
    public func purpose(_ text: String) throws(GateError) -> Purpose {
        try configuration.policies.purpose(named: text)
    }

    /// The policy of a configured purpose; `invalid_purpose` for any other.
    func policy(for purpose: Purpose) throws(GateError) -> CompiledPolicy { try context.policy(for: purpose) }

    /// Reserves a send if every rule of the purpose's policy allows it, atomically: the
    /// default policy (one cooldown, nothing counted) as one `SET ... NX PX ... GET`
    /// (`Cooldowns`), any other as one script call. An allowed send starts a
    /// cooldown whose key holds a fresh nonce; a send denied by a cooldown carries the
    /// running cooldown's token. On a Redis Cluster the per-IP cap and the idempotency
    /// record live in slots of their own and take steps of their own (`reserveOnCluster`).
    ///
    /// The pipeline: the request limit and test numbers (in memory), the policy's regions
    /// and number types, then the store: on a cluster the budgets' step (`SendBudgets`) and
    /// the pumping guard's (`PrefixGuard`) around the number's; on one Redis all in the
    /// number's one call (`FraudGuard`).
    public func reserve(_ request: SendRequest, completion: @escaping (Result<Decision, GateError>) -> Void) {
        let policy: CompiledPolicy
        do { policy = try self.policy(for: request.purpose) } catch { return completion(.failure(error)) }
        // Every request with a client address counts, whatever decides it.
        if let limiter = requestLimiter, let address = request.clientAddress, let wait = limiter.admit(address.text) {
            return completion(.success(.tooManyRequests(request, policy, wait: wait, quota: configuration.ipMaxRequests?.count)))
        }
        reserveAdmitted(request, policy: policy, completion: completion)
    }

    /// `reserve` once the request limit let the request in.
    private func reserveAdmitted(
        _ request: SendRequest, policy: CompiledPolicy, completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        if configuration.testNumbers.contains(request.phone.e164) {
            var decision = Decision.testNumber(request, policy)
            decision.issuedCode = codes.testCode(policy, now: decision.serverTimeMilliseconds)
            return completion(.success(decision))
        }
        if let regions = policy.rules.allowedRegions, !regions.contains(request.phone.region) {
            return completion(.failure(.regionNotAllowed(request.phone.region)))
        }
        guard policy.rules.allowedNumberTypes.contains(request.phone.type) else {
            return completion(.failure(.numberTypeNotAllowed(request.phone.type)))
        }
        // Rules that are not counters read the clock only when the policy has one.
        if !policy.rulesInMemory.isEmpty, let refusal = policy.refusal(of: request, now: configuration.wallClock()) {
            return completion(.success(refusal))
        }
        guard let cipher = tokenSecret.cipher else {
            return tokenSecret.withCipher { [unowned self] result in
                if case .failure(let error) = result { return completion(.failure(error)) }
                self.reserveAdmitted(request, policy: policy, completion: completion)
            }
        }
        guard policy.rules.hasBudgets || policy.rules.pumping.isOn else {
            return reserveNumber(request, policy: policy, cipher: cipher, completion: completion)
        }
        // On one Redis, budgets and the guard are part of the number's script: one call.
        if !store.isCluster {
            let guarding = FraudGuard(request, policy: policy.rules, context: context)
            return reserveNumber(request, policy: policy, cipher: cipher, fraudGuard: guarding, completion: completion)
        }
        // On a cluster they count a send in slots of their own before its number decides,
        // and give it back when the number refuses: requests of one number wait for each
        // other, so a flood for a number in its cooldown holds at most one share at a time.
        let key = request.purpose.name + " " + context.number(request.phone)
        sameNumber.run(key) { [unowned self] done in
            let number: NextStep = { [unowned self] in self.reserveNumber(request, policy: policy, cipher: cipher, completion: $0) }
            let guarded: NextStep = !policy.rules.pumping.isOn ? number : { [unowned self] in
                self.prefixGuard.reserve(request, policy: policy, cipher: cipher, next: number, completion: $0)
            }
            let finish: (Result<Decision, GateError>) -> Void = { outcome in
                done()
                completion(outcome)
            }
            guard policy.rules.hasBudgets else { return guarded(finish) }
            self.budgets.reserve(request, policy: policy, cipher: cipher, next: guarded, completion: finish)
        }
    }

    /// The number's own step: every rule of the policy, and with `fraudGuard` (one Redis)
    /// the budgets' and the pumping guard's too; without it (a cluster) those take steps of
    /// their own around it (`SendBudgets`, `PrefixGuard`).
    func reserveNumber(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, fraudGuard: FraudGuard? = nil,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let address = context.addressKeyText(request)
        let ip = policy.rules.ipMaxSends != nil ? address : nil
        // One slot only: the same two commands on one Redis and on a cluster; unless a gate
        // keeps this purpose's cooldowns in window keys (`WindowCooldowns`): then the script.
        if ip == nil, request.idempotencyKey == nil, fraudGuard == nil, policy.plainCooldownMilliseconds != nil {
            if !cooldowns.windows.firstReadAnswered, cooldowns.windows.waitForFirstRead({ [unowned self] in
                self.reserveNumber(request, policy: policy, cipher: cipher, completion: completion)
            }) { return }
            if cooldowns.reservePlainly(request, policy: policy, cipher: cipher, codes: codes, completion: completion) { return }
        }
        if store.isCluster { return reserveOnCluster(request, policy: policy, cipher: cipher, completion: completion) }
        let number = context.number(request.phone)
        let tokens = context.tokens
        let requestFingerprint = request.idempotencyKey.map { _ in context.fingerprint(request, number: number) }
        let nonce = tokens.next()
        var script = ReserveArguments(
            keys: keys, purpose: request.purpose, number: number, nonce: nonce, ipMember: ip.map { _ in tokens.next() }, ipAddress: ip,
            idempotencyKey: idempotency.recordKey(request), fingerprint: requestFingerprint, fraudGuard: fraudGuard)
        script.code = codes.argument(policy, purpose: request.purpose, number: number)
        let lua = reserveScript(request.purpose, guarded: fraudGuard != nil, countingIP: ip != nil)
        store.evaluate(lua, slotKey: script.slotKey, script.write, completion: { [unowned self] result in
            let outcome = GateContext.decode(result) { reply throws(GateError) in
                let read = try fraudGuard?.read(reply, request: request, policy: policy)
                let decision: Decision
                if let refusal = read?.refusal {
                    decision = refusal
                } else {
                    decision = try ReserveAnswer.decision(
                        from: read?.rest ?? reply, fingerprint: requestFingerprint, request: request, policy: policy,
                        number: number, cipher: cipher, sealer: self.context.codeSealer, offeredCode: script.code
                    ).decision
                }
                if read?.register == true, let prefix = fraudGuard?.prefix {
                    self.prefixGuard.registry.register(purpose: request.purpose, prefix: prefix, now: decision.serverTimeMilliseconds)
                }
                return decision
            }
            self.context.awaitReplicas(for: outcome, slotKey: script.slotKey, completion: completion)
        })
    }

    /// The purpose's reserve script (its policy is configured: `policy(for:)` said so); for
    /// a policy with a window, one that keeps the cooldown there once that is safe (a
    /// policy without one has the same script either way).
    func reserveScript(_ purpose: Purpose, guarded: Bool = false, countingIP: Bool) -> RedisScript {
        guard let scripts = reserveScripts[purpose.name] else { preconditionFailure("no reserve script for a configured purpose") }
        let inWindow = cooldowns.windows.keepsCooldownsInWindows()
        return scripts.script(guarded: guarded, countingIP: countingIP, cooldownInWindow: inWindow)
    }

    /// Records the outcome of a code the back end checked (`Lockout`); refused with
    /// `codes_issued` for a purpose whose codes the gate checks itself (`check`), so no
    /// report can forge or double a conversion.
    public func verify(
        _ phone: PhoneNumber, purpose: Purpose, outcome: VerificationOutcome,
        completion: @escaping (Result<VerificationResult, GateError>) -> Void
    ) {
        if (try? policy(for: purpose))?.rules.codes != nil { return completion(.failure(.codesIssued)) }
        lockout.verify(phone, purpose: purpose, outcome: outcome, completion: completion)
    }

    /// Checks a typed code against the number's live issued code (`IssuedCodeRule`): right
    /// once, then used; wrong ones counted toward the lockout, and a right one toward the
    /// pumping guard's conversion, with no report from the back end.
    public func check(
        _ phone: PhoneNumber, purpose: Purpose, code: String, completion: @escaping (Result<CodeCheck, GateError>) -> Void
    ) {
        codes.check(phone, purpose: purpose, code: code, completion: completion)
    }

    /// Ends the number's running cooldown and refunds its send (`Refunds`): `true` when a
    /// cooldown ran and was refunded, `false` when none ran.
    public func release(_ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<Bool, GateError>) -> Void) {
        refunds.release(phone, purpose: purpose, completion: completion)
    }

    /// Follows the releases of every gate on this Redis (`Refunds`): `onRelease` gets the
    /// nonce each released cooldown key held (``CountdownReading/cooldownIdentity``), on
    /// this worker's loop; `onSubscribed` runs each time the subscription is (again) in
    /// place (releases published while it was down are not seen). Idempotent.
    public func followReleases(onRelease: @escaping (String) -> Void, onSubscribed: @escaping () -> Void) {
        refunds.follow(onRelease: onRelease, onSubscribed: onSubscribed)
    }

    /// The prefixes the pumping guard blocks now, of every purpose whose guard is on
    /// (`PrefixRegistry`), at most `blockedPrefixCapacity`.
    public func blockedPrefixes(completion: @escaping (Result<[PrefixFigures], GateError>) -> Void) {
        prefixGuard.registry.blocked(completion: completion)
    }

    /// Stops the connection; pending calls fail as store unavailable.
    public func close() {
        refunds.close()
        cooldowns.close()
        store.close()
    }
}

/// The rest of a send's decision after a step taken on its own (a cluster's budgets, the
/// pumping guard), given the completion that step's answer goes to.
typealias NextStep = (@escaping (Result<Decision, GateError>) -> Void) -> Void
