/// The gate on one event loop: turns requests into single script calls on the
/// loop's own Redis connection and replies into decisions. Confined to its loop:
/// call every method on the loop's thread. The HTTP server runs one per worker;
/// `Gate` wraps one for async callers.
public final class GateWorker {
    public let connection: RedisConnection
    public let configuration: GateConfiguration
    /// This worker's own parser and cache, so parsing never contends across loops.
    public let parser: PhoneNumberParser
    private let keys: NumberKeyHasher
    private let compiled: [String: CompiledPolicy]
    private let fallback: CompiledPolicy

    /// `parserCapacity` bounds the worker's cache of parsed numbers (16 384 results, a few MB):
    /// enough to hold the numbers of the last minutes of traffic, where repeats happen.
    public init(loop: EventLoop, configuration: GateConfiguration, parserCapacity: Int = 16_384) {
        self.configuration = configuration
        connection = RedisConnection(loop: loop, configuration: configuration.redis, scripts: GateScripts.all)
        parser = PhoneNumberParser(capacity: parserCapacity)
        keys = NumberKeyHasher(secret: configuration.keySecret)
        fallback = CompiledPolicy(configuration.policies.fallback)
        compiled = configuration.policies.purposes.mapValues(CompiledPolicy.init)
    }

    /// Canonicalises `text` with the configured default region.
    public func phone(_ text: String) throws(GateError) -> PhoneNumber {
        do {
            return try parser.parse(text, defaultRegion: configuration.defaultRegion)
        } catch {
            throw .invalidPhone(error)
        }
    }

    /// Reserves a send if every rule of the purpose's policy allows it, in one
    /// atomic script call. An allowed send starts a cooldown with a fresh countdown
    /// token; a send denied by a cooldown carries the running cooldown's token.
    public func reserve(_ request: SendRequest, completion: @escaping (Result<Decision, GateError>) -> Void) {
        let policy = compiled[request.purpose.name] ?? fallback
        if let regions = policy.rules.allowedRegions, !regions.contains(request.phone.region) {
            return completion(.failure(.regionNotAllowed(request.phone.region)))
        }
        guard policy.rules.allowedNumberTypes.contains(request.phone.type) else {
            return completion(.failure(.numberTypeNotAllowed(request.phone.type)))
        }
        let prefix = configuration.keyPrefix
        let number = keys.keyText(for: request.phone.e164)
        let purpose = request.purpose
        let token = CountdownToken.random()
        let ip = policy.rules.ipMaxSends != nil ? request.clientAddress?.text : nil
        let fingerprint = request.idempotencyKey.map { _ in "\(number)|\(purpose.name)|\(request.clientAddress?.text ?? "")" }
        let idempotencyKey = request.idempotencyKey
        let lifetime = configuration.idempotencyLifetime.wholeMilliseconds
        connection.evaluate(GateScripts.reserve, { args in
            args.append(5)
            args.appendNumberKey(prefix: prefix, purpose: purpose, number: number, suffix: "cooldown")
            args.appendNumberKey(prefix: prefix, purpose: purpose, number: number, suffix: "sends")
            // Unused keys still name a key, so the script's arity never changes.
            args.append(concatenating: prefix, ":ip:{", ip ?? "-", "}:sends")
            args.append(concatenating: prefix, ":idem:{", idempotencyKey.map { SHA1.hexDigest(Array($0.utf8)) } ?? "-", "}")
            args.append(concatenating: prefix, ":countdown:{", token.text, "}")
            args.append(Int(policy.windowMilliseconds))
            args.append(policy.rules.maxSends ?? 0)
            args.append(ip == nil ? 0 : policy.rules.ipMaxSends ?? 0)
            args.append(Int(policy.ipWindowMilliseconds))
            args.append(fingerprint ?? "")
            args.append(Int(lifetime))
            args.append(token.text)
            args.append(concatenating: purpose.name, ":", number, "@")
            for step in policy.ladderMilliseconds { args.append(Int(step)) }
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply else { throw Self.unexpected(reply) }
                if items.count == 1, items[0].integer == -1 { throw .idempotencyKeyReused }
                guard items.count == 8, let allowed = items[0].integer, let wait = items[2].integer,
                      let sends = items[3].integer, let next = items[4].integer, let now = items[5].integer
                else { throw Self.unexpected(reply) }
                let reason = items[1].string.flatMap(Decision.Reason.init(rawValue:))
                return Decision(
                    allowed: allowed == 1, reason: allowed == 1 ? nil : reason ?? .cooldown,
                    phone: request.phone, purpose: purpose,
                    retryAfterMilliseconds: Int64(wait), serverTimeMilliseconds: Int64(now), sendsInWindow: sends,
                    sendsLeft: policy.rules.maxSends.map { max(0, $0 - sends) },
                    nextRetryAfterMilliseconds: Int64(next), replayed: items[7].integer == 1,
                    countdownToken: items[6].string.flatMap { CountdownToken(validating: $0) })
            })
        })
    }

    /// The remaining time of the cooldown that issued `token`, or nil when the token is
    /// unknown, expired or stale (the cooldown was released or replaced). One script call.
    public func countdown(
        _ token: CountdownToken, completion: @escaping (Result<CountdownReading?, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        connection.evaluate(GateScripts.countdown, { args in
            args.append(1)
            args.append(token.key(prefix: prefix))
            args.append(token.text)
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply, items.count == 2,
                      let pttl = items[0].integer, let now = items[1].integer else { throw Self.unexpected(reply) }
                guard pttl > 0 else { return nil }
                return CountdownReading(retryAfterMilliseconds: Int64(pttl), serverTimeMilliseconds: Int64(now))
            })
        })
    }

    /// Reads the number's cooldown without consuming anything.
    public func peek(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<CooldownStatus, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        let number = keys.keyText(for: phone.e164)
        let firstStep = (compiled[purpose.name] ?? fallback).ladderMilliseconds[0]
        connection.evaluate(GateScripts.peek, { args in
            args.append(1)
            args.appendNumberKey(prefix: prefix, purpose: purpose, number: number, suffix: "cooldown")
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply, items.count == 2,
                      let pttl = items[0].integer, let now = items[1].integer else { throw Self.unexpected(reply) }
                // -2: no cooldown. -1: a key without expiry (never written by us): the
                // next reserve gives it the first step, so report that much.
                let remaining = pttl == -1 ? firstStep : max(0, Int64(pttl))
                return CooldownStatus(
                    phone: phone, purpose: purpose, retryAfterMilliseconds: remaining, serverTimeMilliseconds: Int64(now))
            })
        })
    }

    /// Ends the number's cooldown and refunds its send (the ladder step and the
    /// window's count go back by one); `true` when a cooldown was running.
    public func release(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<Bool, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        let number = keys.keyText(for: phone.e164)
        connection.evaluate(GateScripts.release, { args in
            args.append(2)
            args.appendNumberKey(prefix: prefix, purpose: purpose, number: number, suffix: "cooldown")
            args.appendNumberKey(prefix: prefix, purpose: purpose, number: number, suffix: "sends")
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard let released = reply.integer else { throw Self.unexpected(reply) }
                return released == 1
            })
        })
    }

    /// Stops the connection; pending calls fail as store unavailable.
    public func close() {
        connection.close()
    }

    private static func decode<T>(
        _ result: Result<RedisReply, RedisError>, _ body: (RedisReply) throws(GateError) -> T
    ) -> Result<T, GateError> {
        switch result {
        case .success(let reply):
            do { return .success(try body(reply)) } catch { return .failure(error) }
        case .failure(let error):
            return .failure(.storeUnavailable(error.description))
        }
    }

    private static func unexpected(_ reply: RedisReply) -> GateError {
        .storeUnavailable("unexpected reply from Redis: \(reply)")
    }
}

/// A policy with its durations turned into the milliseconds the script takes.
private struct CompiledPolicy {
    let rules: Policy
    let ladderMilliseconds: [Int64]
    /// 0 when sends need no counting (a flat cooldown without a cap).
    let windowMilliseconds: Int64
    let ipWindowMilliseconds: Int64

    init(_ rules: Policy) {
        self.rules = rules
        ladderMilliseconds = rules.ladder.map(\.wholeMilliseconds)
        windowMilliseconds = rules.ladder.count > 1 || rules.maxSends != nil ? rules.window.wholeMilliseconds : 0
        ipWindowMilliseconds = rules.ipWindow.wholeMilliseconds
    }
}
