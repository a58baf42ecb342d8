import RedisClient

/// What every rule of one worker shares (store, key spellings, nonces, policies); the rules
/// own the rest of their state. Confined to the worker's loop.
final class GateContext {
    let store: any GateStore
    let configuration: GateConfiguration
    let keys: GateKeys
    /// A number's text in its keys: the number, or its HMAC under `keySecret`.
    let numberHasher: NumberKeyHasher
    let tokens = CountdownTokenSource()
    /// The policy of every configured purpose, and of no other (`PolicySet`).
    let compiled: [String: CompiledPolicy]
    /// Makes, seals and checks issued codes, with the deployment's code secret; nil without one.
    let codeSealer: CodeSealer?

    init(store: any GateStore, configuration: GateConfiguration, compiled: [String: CompiledPolicy]) {
        self.store = store
        self.configuration = configuration
        self.compiled = compiled
        keys = GateKeys(prefix: configuration.keyPrefix)
        numberHasher = NumberKeyHasher(secret: configuration.keySecret)
        codeSealer = configuration.codeSecret.map(CodeSealer.init(secret:))
    }

    /// The policy of a configured purpose; for any other nil, once `completion` got
    /// `invalid_purpose`, so a made-up purpose never gets limits (and Redis keys) of its own.
    func policy<T>(for purpose: Purpose, else completion: (Result<T, GateError>) -> Void) -> CompiledPolicy? {
        guard let policy = compiled[purpose.name] else {
            completion(.failure(.unconfiguredPurpose(purpose)))
            return nil
        }
        return policy
    }

    /// The number's text in its keys.
    func number(_ phone: PhoneNumber) -> String { numberHasher.keyText(for: phone.e164) }

    /// The client's address as keys and records name it: the address, or its HMAC.
    func addressKeyText(_ request: SendRequest) -> String? {
        request.clientAddress.map { numberHasher.keyText(forAddress: $0.text) }
    }

    /// What identifies a request for its `Idempotency-Key`: the number and address as keys
    /// name them, the purpose, and the caller (so the record says whose it is).
    func fingerprint(_ request: SendRequest, number: String) -> String {
        let base = "\(number)|\(request.purpose.name)|\(addressKeyText(request) ?? "")"
        return request.caller.isEmpty ? base : base + "|" + request.caller
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
        store.send(slotKey: slotKey(), { $0.append("WAIT", wanted, Int(timeout)) }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard let acknowledged = reply.integer else { throw Self.unexpected(reply) }
                guard acknowledged >= wanted else {
                    throw .storeUnavailable("only \(acknowledged) of \(wanted) replicas acknowledged the reservation within \(timeout) ms")
                }
                return decision
            })
        })
    }

    /// Gives back a share a step took (`ZREM` of its member), not awaited: a share a failed
    /// `ZREM` leaves counts until its window ends.
    func giveBack(member: CooldownNonce, of key: String) {
        store.send(slotKey: key, { $0.append("ZREM", key, member.text) }, completion: { _ in })
    }

    /// A store's reply read by `body`; a failed call is a store failure.
    static func decode<T>(
        _ result: Result<RedisReply, RedisError>, _ body: (RedisReply) throws(GateError) -> T
    ) -> Result<T, GateError> {
        switch result {
        case .success(let reply):
            do { return .success(try body(reply)) } catch { return .failure(error) }
        case .failure(let error):
            return .failure(.store(error))
        }
    }

    static func unexpected(_ reply: RedisReply) -> GateError {
        .storeUnavailable("unexpected reply from Redis: \(reply)")
    }
}
