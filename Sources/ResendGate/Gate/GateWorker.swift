import GateEventLoop
import RedisClient

/// The gate on one event loop: requests become script calls on the loop's own Redis
/// connection. Call every method on the loop's thread. The HTTP server runs one per
/// worker; `Gate` wraps one for async callers.
public final class GateWorker {
    /// One Redis, a Sentinel-named master or a Cluster, behind the protocol the rules use.
    public var store: any GateStore { context.store }
    public let configuration: GateConfiguration
    /// This worker's own parser and cache, so parsing never contends across loops.
    public let parser: PhoneNumberParser
    /// How this gate's Redis keys are spelled (under `configuration.keyPrefix`).
    public var keys: GateKeys { context.keys }
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
    /// Counts `ipMaxRequests` before Redis (shared by a server's workers); nil without it.
    let requestLimiter: RequestLimiter?
    let sameNumber = SameNumberQueue()

    /// The most prefixes the registry of blocked prefixes keeps and the listing returns.
    public static let blockedPrefixCapacity = PrefixRegistry.capacity

    /// `parserCapacity` bounds the cache of parsed numbers (at most about 4 MiB): the last
    /// minutes of traffic, where repeats happen. `logger` hears of the Redis connection,
    /// never a number. `store` makes another store than Redis from the scripts to load (a
    /// test's). `requestLimiter` counts `ipMaxRequests` (one a server's workers share);
    /// nil: one of this worker's own, when `ipMaxRequests` is set.
    public init(
        loop: EventLoop, configuration: GateConfiguration, parserCapacity: Int = 16_384, logger: GateLogger = .off,
        requestLimiter: RequestLimiter? = nil, store makeStore: (([RedisScript]) -> any GateStore)? = nil
    ) {
        self.configuration = configuration
        parser = PhoneNumberParser(capacity: parserCapacity)
        let fallback = CompiledPolicy(configuration.policies.fallback)
        var compiled = configuration.policies.purposes.mapValues(CompiledPolicy.init)
        for name in configuration.policies.configuredPurposes where compiled[name] == nil { compiled[name] = fallback }
        let longestIPWindow = compiled.values.filter { $0.rules.ipMaxSends != nil }.map(\.ipWindowMilliseconds).max() ?? 0
        reserveScripts = compiled.mapValues {
            ReserveScripts(
                policy: $0, idempotencyLifetimeMilliseconds: configuration.idempotencyLifetime.wholeMilliseconds,
                longestIPWindowMilliseconds: longestIPWindow)
        }
        // Loaded at connect; purposes of one policy share their scripts.
        let scripts = GateScripts.all + Set(reserveScripts.values.flatMap(\.all)).sorted { $0.sha1 < $1.sha1 }
        let store = makeStore?(scripts) ?? RedisStore(loop: loop, configuration: configuration.redis, scripts: scripts, logger: logger)
        context = GateContext(store: store, configuration: configuration, compiled: compiled)
        tokenSecret = TokenSecret(given: configuration.tokenSecret, store: store, key: context.keys.tokenSecret)
        cooldowns = Cooldowns(loop: loop, context: context)
        refunds = Refunds(context: context)
        idempotency = IdempotencyRecords(context: context)
        ipCap = IPCap(context: context, longestWindowMilliseconds: longestIPWindow)
        budgets = SendBudgets(context: context)
        prefixGuard = PrefixGuard(context: context)
        lockout = Lockout(context: context, prefixGuard: prefixGuard)
        codes = IssuedCodeRule(context: context, prefixGuard: prefixGuard)
        self.requestLimiter = configuration.ipMaxRequests.map { requestLimiter ?? RequestLimiter(rate: $0) }
    }

    /// Canonicalises `text`: a national spelling is read in `region` (see
    /// ``Gate/requestRegion(_:)``), else in the default region.
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

    /// Reserves a send if every rule of the purpose's policy allows it, atomically: the
    /// default policy as one `SET ... NX PX ... GET` (`Cooldowns`), any other as one script
    /// call (`FraudGuard` adds budgets and the pumping guard). An allowed send starts a
    /// cooldown; a denied one carries the running cooldown's token. On a Cluster, what
    /// lives in other slots takes steps of its own around it (`Placement`, `SlotSteps`).
    /// Checked first, in memory: the request limit, test numbers, regions and number types.
    public func reserve(_ request: SendRequest, completion: @escaping (Result<Decision, GateError>) -> Void) {
        guard let policy = context.policy(for: request.purpose, else: completion) else { return }
        // Every request with a client address counts, whatever decides it.
        if let limiter = requestLimiter, let address = request.clientAddress, let wait = limiter.admit(address.text) {
            let now = Decision.wallClockMilliseconds(), quota = configuration.ipMaxRequests?.count
            return completion(.success(policy.refusal(request, by: .tooManyRequests, wait: wait, now: now, quota: quota)))
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
        if let refusal = policy.refusal(of: request, clock: configuration.wallClock) { return completion(.success(refusal)) }
        guard let cipher = tokenSecret.cipher else {
            let again = { [unowned self] in self.reserveAdmitted(request, policy: policy, completion: completion) }
            return tokenSecret.retry(again, failing: completion)
        }
        let send = StepSend(request, policy: policy, cipher: cipher, number: context.number(request.phone))
        let placed = Placement(send, in: self)
        guard !placed.steps.isEmpty else { return reserveNumber(send, placed, completion: completion) }
        // A number's requests wait for each other when a step holds shares other numbers
        // count, so a flood for a number in its cooldown holds one share at a time.
        sameNumber.run(request.purpose.name + " " + send.number, if: placed.sharesAcrossNumbers) { done in
            SlotSteps.run(placed.steps[...], send, number: { [unowned self] in self.reserveNumber(send, placed, completion: $0) }) {
                done()
                completion($0)
            }
        }
    }

    /// The number's own step: its script, with the rules `placed` puts in it.
    func reserveNumber(_ send: StepSend, _ placed: Placement, completion: @escaping (Result<Decision, GateError>) -> Void) {
        let request = send.request, policy = send.policy, number = send.number
        // One slot: the same commands on one Redis and a cluster, unless a gate keeps this
        // purpose's cooldowns in window keys (`WindowCooldowns`): then the script.
        if policy.rules.ipMaxSends == nil || request.clientAddress == nil, request.idempotencyKey == nil, placed.fraudGuard == nil,
           policy.plainCooldownMilliseconds != nil {
            if !cooldowns.windows.firstReadAnswered, cooldowns.windows.waitForFirstRead({ [unowned self] in
                self.reserveNumber(send, placed, completion: completion)
            }) { return }
            if cooldowns.reservePlainly(send, codes: codes, completion: completion) { return }
        }
        let tokens = context.tokens, keys = context.keys
        var script = ReserveArguments(
            keys: keys, send: send, placed: placed, nonce: tokens.next(), ipMember: placed.ipInScript.map { _ in tokens.next() })
        script.code = codes.argument(policy, purpose: request.purpose, number: number)
        let lua: RedisScript
        (lua, script.cooldownKeyOnly) = reserveScript(request.purpose, placed)
        let fraudGuard = placed.fraudGuard
        let call = ScriptCall(script: lua, slotKey: script.slotKey, arguments: script.write, decode: { [unowned self] reply throws(GateError) in
            let read = try fraudGuard?.read(reply, request: request, policy: policy)
            let decision: Decision
            if let refusal = read?.refusal {
                decision = refusal
            } else {
                let answer = try ReserveAnswer.decision(
                    from: read?.rest ?? reply, fingerprint: placed.recordInScript?.fingerprint, send: send,
                    sealer: self.context.codeSealer, offeredCode: script.code)
                (decision, send.cooldownValue) = (answer.decision, answer.nonce)
            }
            if read?.register == true, let prefix = fraudGuard?.prefix {
                self.prefixGuard.registry.register(purpose: request.purpose, prefix: prefix, now: decision.serverTimeMilliseconds)
            }
            return decision
        })
        store.run(call) { [unowned self] outcome in
            self.context.awaitReplicas(for: outcome, slotKey: script.slotKey, completion: completion)
        }
    }

    /// The purpose's reserve script with the rules `placed` puts in it, keeping the cooldown in
    /// the window once that is safe; or, while safe, `ReserveScripts.cooldownKeyOnly`.
    private func reserveScript(_ purpose: Purpose, _ placed: Placement) -> (RedisScript, cooldownKeyOnly: Bool) {
        guard let scripts = reserveScripts[purpose.name] else { preconditionFailure("no reserve script for a configured purpose") }
        if placed.numberSlotOnly, let keyOnly = scripts.cooldownKeyOnly, cooldowns.windows.plainDecisionIsSafe(for: purpose.name) {
            return (keyOnly, true)
        }
        let inWindow = cooldowns.windows.keepsCooldownsInWindows()
        return (scripts.script(guarded: placed.fraudGuard != nil, countingIP: placed.ipInScript != nil, cooldownInWindow: inWindow), false)
    }

    /// Records the outcome of a code the back end checked (`Lockout`); `codes_issued` for a
    /// purpose whose codes the gate checks itself, so no report can forge a conversion.
    public func verify(
        _ phone: PhoneNumber, purpose: Purpose, outcome: VerificationOutcome,
        completion: @escaping (Result<VerificationResult, GateError>) -> Void
    ) {
        if context.compiled[purpose.name]?.rules.codes != nil { return completion(.failure(.codesIssued)) }
        lockout.verify(phone, purpose: purpose, outcome: outcome, completion: completion)
    }

    /// Checks a typed code against the number's live issued code (`IssuedCodeRule`); wrong
    /// ones count toward the lockout, a right one toward the pumping guard's conversion.
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

    /// Follows the releases of every gate on this Redis (`Refunds`): `onRelease` gets each
    /// released cooldown's nonce (``CountdownReading/cooldownIdentity``) on this loop;
    /// `onSubscribed` runs each time the subscription is (again) in place: releases
    /// published while it was down are missed. Idempotent.
    public func followReleases(onRelease: @escaping (String) -> Void, onSubscribed: @escaping () -> Void) {
        refunds.follow(onRelease: onRelease, onSubscribed: onSubscribed)
    }

    /// The prefixes the pumping guard blocks now (`PrefixRegistry`), at most `blockedPrefixCapacity`.
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
