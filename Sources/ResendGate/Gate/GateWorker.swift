import GateEventLoop
import RedisClient

/// The gate on one event loop: turns requests into single script calls on the
/// loop's own Redis connection and replies into decisions. Confined to its loop:
/// call every method on the loop's thread. The HTTP server runs one per worker;
/// `Gate` wraps one for async callers.
public final class GateWorker {
    /// One Redis, the master Sentinels name, or a Redis Cluster (`RedisStore`), behind
    /// the narrow protocol the rules use.
    public let store: any GateStore
    public let configuration: GateConfiguration
    /// This worker's own parser and cache, so parsing never contends across loops.
    public let parser: PhoneNumberParser
    /// How this gate's Redis keys are spelled (under `configuration.keyPrefix`).
    public let keys: GateKeys
    /// A number's text in its keys: the number, or its HMAC under `keySecret`.
    let numberHasher: NumberKeyHasher
    let tokens = CountdownTokenSource()
    /// Seals and opens countdown tokens, once the deployment's secret is known.
    let tokenSecret: TokenSecret
    /// The policy of every configured purpose, and of no other (`PolicySet`).
    let compiled: [String: CompiledPolicy]
    /// Each configured purpose's reserve scripts, its policy written in (`ReserveScripts`).
    let reserveScripts: [String: ReserveScripts]
    /// The longest IP window of the purposes that cap IPs: the IP's sends are one set
    /// for all of them, kept that long (see `ReserveScripts`).
    let longestIPWindowMilliseconds: Int64
    /// Releases announced by any gate, once `followReleases` was called.
    var releases: (any ChannelFollowing)?
    /// Which purposes' cooldowns gates keep in window keys: a plain cooldown takes `SET NX`
    /// only for a purpose no gate does.
    let windowCooldowns: WindowCooldowns
    /// Each client address's requests against `ipMaxRequests`, before Redis; nil without it.
    let requestLimiter: RequestLimiter?
    /// On a cluster, the sends with steps outside the number's slot (budgets, the pumping
    /// guard) being decided, one at a time per number (`SameNumberQueue`).
    let sameNumber = SameNumberQueue()
    /// The listing of blocked prefixes being read, shared by the callers meanwhile.
    let listing = SharedRead<[PrefixFigures]>(limit: 65_536, overflow: .storeUnavailable("too many listings waiting"))

    /// `parserCapacity` bounds the worker's cache of parsed numbers (16 384 results, and at
    /// most about 4 MiB whatever the results): enough to hold the numbers of the last
    /// minutes of traffic, where repeats happen. `logger` hears what happens to the Redis
    /// connection (reconnects, master switches, slot re-maps, script reloads), never a number.
    /// `store` makes another store than Redis, given the scripts to load: a test's, or a
    /// second kind of store.
    public init(
        loop: EventLoop, configuration: GateConfiguration, parserCapacity: Int = 16_384, logger: GateLogger = .off,
        store makeStore: (([RedisScript]) -> any GateStore)? = nil
    ) {
        self.configuration = configuration
        parser = PhoneNumberParser(capacity: parserCapacity)
        keys = GateKeys(prefix: configuration.keyPrefix)
        numberHasher = NumberKeyHasher(secret: configuration.keySecret)
        let fallback = CompiledPolicy(configuration.policies.fallback)
        var compiled = configuration.policies.purposes.mapValues(CompiledPolicy.init)
        for name in configuration.policies.configuredPurposes where compiled[name] == nil { compiled[name] = fallback }
        self.compiled = compiled
        let longestIPWindow = compiled.values.filter { $0.rules.ipMaxSends != nil }.map(\.ipWindowMilliseconds).max() ?? 0
        reserveScripts = compiled.mapValues {
            ReserveScripts(
                policy: $0, idempotencyLifetimeMilliseconds: configuration.idempotencyLifetime.wholeMilliseconds,
                longestIPWindowMilliseconds: longestIPWindow)
        }
        longestIPWindowMilliseconds = longestIPWindow
        // Every purpose's reserve scripts are loaded at connect, with the others (purposes
        // of one policy share theirs).
        let scripts = GateScripts.all + Set(reserveScripts.values.flatMap(\.all)).sorted { $0.sha1 < $1.sha1 }
        store = makeStore?(scripts) ?? RedisStore(loop: loop, configuration: configuration.redis, scripts: scripts, logger: logger)
        windowCooldowns = WindowCooldowns(
            loop: loop, store: store, key: keys.windowCooldowns, period: configuration.windowCooldownsPeriod,
            windowed: configuration.cooldownsInWindows
                ? compiled.filter { $0.value.windowMilliseconds > 0 }.map { ($0.key, $0.value.longestHoldMilliseconds) } : [])
        tokenSecret = TokenSecret(given: configuration.tokenSecret, store: store, key: keys.tokenSecret)
        requestLimiter = configuration.ipMaxRequests.map { RequestLimiter(rate: $0) }
        // At once, not at the first decision: the warm-up of a gate with a window runs from
        // here, for every worker of a server alike.
        windowCooldowns.start()
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

    /// The policy of a configured purpose; `invalid_purpose` for any other, so a made-up
    /// purpose never gets limits (and Redis keys) of its own.
    func policy(for purpose: Purpose) throws(GateError) -> CompiledPolicy {
        guard let policy = compiled[purpose.name] else { throw .unconfiguredPurpose(purpose) }
        return policy
    }

    /// Reserves a send if every rule of the purpose's policy allows it, atomically: the
    /// default policy (one cooldown, nothing counted) as one `SET ... NX PX ... GET`
    /// (`reserveCooldown`), any other as one script call. An allowed send starts a
    /// cooldown whose key holds a fresh nonce; a send denied by a cooldown carries the
    /// running cooldown's token. On a Redis Cluster the per-IP cap and the idempotency
    /// record live in slots of their own and take steps of their own (`reserveOnCluster`).
    public func reserve(_ request: SendRequest, completion: @escaping (Result<Decision, GateError>) -> Void) {
        let policy: CompiledPolicy
        do { policy = try self.policy(for: request.purpose) } catch { return completion(.failure(error)) }
        // Every request with a client address counts, whatever decides it.
        if let limiter = requestLimiter, let address = request.clientAddress, let wait = limiter.admit(address.text) {
            return completion(.success(tooManyRequests(request, policy, wait: wait, quota: configuration.ipMaxRequests?.count)))
        }
        reserveAdmitted(request, policy: policy, completion: completion)
    }

    /// `reserve` once the request limit let the request in.
    private func reserveAdmitted(
        _ request: SendRequest, policy: CompiledPolicy, completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        if configuration.testNumbers.contains(request.phone.e164) { return completion(.success(testNumberDecision(request, policy))) }
        if let regions = policy.rules.allowedRegions, !regions.contains(request.phone.region) {
            return completion(.failure(.regionNotAllowed(request.phone.region)))
        }
        guard policy.rules.allowedNumberTypes.contains(request.phone.type) else {
            return completion(.failure(.numberTypeNotAllowed(request.phone.type)))
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
            let guarding = FraudGuard(request, policy: policy.rules, member: tokens.next())
            return reserveNumber(request, policy: policy, cipher: cipher, fraudGuard: guarding, completion: completion)
        }
        // On a cluster they count a send in slots of their own before its number decides,
        // and give it back when the number refuses: requests of one number wait for each
        // other, so a flood for a number in its cooldown holds at most one share at a time.
        let key = request.purpose.name + " " + numberHasher.keyText(for: request.phone.e164)
        sameNumber.run(key) { [unowned self] done in
            // Budgets are a step of their own before the number's.
            let finish: (Result<Decision, GateError>) -> Void = { outcome in
                done()
                completion(outcome)
            }
            if policy.rules.hasBudgets { return self.reserveWithinBudgets(request, policy: policy, cipher: cipher, completion: finish) }
            self.reserveWithinBudget(request, policy: policy, cipher: cipher, completion: finish)
        }
    }

    /// The steps after the budgets (the send's shares are taken, or it has none): the
    /// pumping guard's around the number's, or the number's alone.
    func reserveWithinBudget(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        if policy.rules.pumping.isOn { return reserveGuarded(request, policy: policy, cipher: cipher, completion: completion) }
        reserveNumber(request, policy: policy, cipher: cipher, completion: completion)
    }

    /// The number's own step: every rule of the policy, and with `fraudGuard` (one Redis)
    /// the budgets' and the pumping guard's too; without it (a cluster) those take steps of
    /// their own around it (GateWorker+Budgets.swift, GateWorker+Pumping.swift).
    func reserveNumber(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, fraudGuard: FraudGuard? = nil,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let address = addressKeyText(request)
        let ip = policy.rules.ipMaxSends != nil ? address : nil
        let idempotencyKey = request.idempotencyKey
        // One slot only: the same two commands on one Redis and on a cluster; unless a gate
        // keeps this purpose's cooldowns in window keys (`WindowCooldowns`): then the script.
        if let milliseconds = policy.plainCooldownMilliseconds, ip == nil, idempotencyKey == nil, fraudGuard == nil {
            if !windowCooldowns.firstReadAnswered, windowCooldowns.waitForFirstRead({ [unowned self] in
                self.reserveNumber(request, policy: policy, cipher: cipher, completion: completion)
            }) { return }
            if windowCooldowns.plainDecisionIsSafe(for: request.purpose.name) {
                return reserveCooldown(
                    request, policy: policy, number: numberHasher.keyText(for: request.phone.e164), nonce: tokens.next(),
                    milliseconds: milliseconds, cipher: cipher, completion: completion)
            }
        }
        if store.isCluster { return reserveOnCluster(request, policy: policy, cipher: cipher, completion: completion) }
        let number = numberHasher.keyText(for: request.phone.e164)
        let recordKey = request.idempotencyKey.map { keys.idempotencyRecord(idempotencyKey: $0, caller: request.caller) }
        let requestFingerprint = idempotencyKey.map { _ in self.fingerprint(request, number: number, address: address) }
        let script = ReserveArguments(
            keys: keys, purpose: request.purpose, number: number, nonce: tokens.next(), ipMember: ip.map { _ in tokens.next() }, ipAddress: ip,
            idempotencyKey: recordKey, fingerprint: requestFingerprint, fraudGuard: fraudGuard)
        let lua = reserveScript(request.purpose, guarded: fraudGuard != nil, countingIP: ip != nil)
        store.evaluate(lua, slotKey: script.slotKey, script.write, completion: { [unowned self] result in
            let outcome = Self.decode(result) { reply throws(GateError) in
                let read = try fraudGuard?.read(reply, request: request, policy: policy)
                let decision: Decision
                if let refusal = read?.refusal {
                    decision = refusal
                } else {
                    decision = try Self.reserveDecision(
                        from: read?.rest ?? reply, fingerprint: requestFingerprint, request: request, policy: policy,
                        number: number, cipher: cipher
                    ).decision
                }
                if read?.register == true, let prefix = fraudGuard?.prefix {
                    self.registerBlocked(purpose: request.purpose, prefix: prefix, now: decision.serverTimeMilliseconds)
                }
                return decision
            }
            self.awaitReplicas(for: outcome, slotKey: script.slotKey, completion: completion)
        })
    }

    /// The purpose's reserve script (its policy is configured: `policy(for:)` said so); for
    /// a policy with a window, one that keeps the cooldown there once that is safe (a
    /// policy without one has the same script either way).
    func reserveScript(_ purpose: Purpose, guarded: Bool = false, countingIP: Bool) -> RedisScript {
        guard let scripts = reserveScripts[purpose.name] else { preconditionFailure("no reserve script for a configured purpose") }
        return scripts.script(guarded: guarded, countingIP: countingIP, cooldownInWindow: windowCooldowns.keepsCooldownsInWindows())
    }

    /// With `waitReplicas`: an allowed reservation is answered only once that many
    /// replicas have it (`WAIT`); fewer in time is a store failure, never an allowed send.
    func awaitReplicas(
        for outcome: Result<Decision, GateError>, slotKey: @autoclosure () -> String,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let wanted = configuration.waitReplicas
        guard wanted > 0, case .success(let decision) = outcome, decision.allowed, !decision.replayed else {
            return completion(outcome)
        }
        let timeout = max(1, configuration.redis.commandTimeout.wholeMilliseconds / 2)
        store.send(slotKey: slotKey(), { args in
            args.append("WAIT")
            args.append(wanted)
            args.append(Int(timeout))
        }, completion: { result in
            switch result {
            case .success(.integer(let acknowledged)) where acknowledged >= wanted:
                completion(outcome)
            case .success(.integer(let acknowledged)):
                completion(.failure(.storeUnavailable(
                    "only \(acknowledged) of \(wanted) replicas acknowledged the reservation within \(timeout) ms")))
            case .success(let reply):
                completion(.failure(Self.unexpected(reply)))
            case .failure(let error):
                completion(.failure(.storeUnavailable(error.description)))
            }
        })
    }

    /// What identifies a request for its `Idempotency-Key`; with a caller, its name too
    /// (the record's key already names it: this makes the record say whose it is). The
    /// number and the client's address as their keys name them (HMACs under `keySecret`:
    /// `addressKeyText`).
    func fingerprint(_ request: SendRequest, number: String, address: String?) -> String {
        let base = "\(number)|\(request.purpose.name)|\(address ?? "")"
        return request.caller.isEmpty ? base : base + "|" + request.caller
    }

    /// The client's address as keys and records name it: the address, or its HMAC.
    func addressKeyText(_ request: SendRequest) -> String? {
        request.clientAddress.map { numberHasher.keyText(forAddress: $0.text) }
    }

    /// Stops the connection; pending calls fail as store unavailable.
    public func close() {
        releases?.close()
        windowCooldowns.close()
        store.close()
    }

    static func decode<T>(
        _ result: Result<RedisReply, RedisError>, _ body: (RedisReply) throws(GateError) -> T
    ) -> Result<T, GateError> {
        switch result {
        case .success(let reply):
            do { return .success(try body(reply)) } catch { return .failure(error) }
        case .failure(let error):
            return .failure(.storeUnavailable(error.description))
        }
    }

    static func unexpected(_ reply: RedisReply) -> GateError {
        .storeUnavailable("unexpected reply from Redis: \(reply)")
    }
}
