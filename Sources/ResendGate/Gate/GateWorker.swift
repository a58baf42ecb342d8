/// The gate on one event loop: turns requests into single script calls on the
/// loop's own Redis connection and replies into decisions. Confined to its loop:
/// call every method on the loop's thread. The HTTP server runs one per worker;
/// `Gate` wraps one for async callers.
public final class GateWorker {
    public let connection: RedisConnection
    public let configuration: GateConfiguration
    /// This worker's own parser and cache, so parsing never contends across loops.
    public let parser: PhoneNumberParser
    private let windowMilliseconds: Int64
    private let ladderMilliseconds: [Int64]

    public init(loop: EventLoop, configuration: GateConfiguration, parserCapacity: Int = 65_536) {
        self.configuration = configuration
        connection = RedisConnection(loop: loop, configuration: configuration.redis, scripts: GateScripts.all)
        parser = PhoneNumberParser(capacity: parserCapacity)
        let policy = configuration.policy
        windowMilliseconds = policy.countsSends ? policy.window.wholeMilliseconds : 0
        ladderMilliseconds = policy.ladder.map(\.wholeMilliseconds)
    }

    /// Canonicalises `text` with the configured default region.
    public func phone(_ text: String) throws(GateError) -> PhoneNumber {
        do {
            return try parser.parse(text, defaultRegion: configuration.defaultRegion)
        } catch {
            throw .invalidPhone(error)
        }
    }

    /// Reserves a send if the number's cooldown allows it, in one atomic script call.
    /// An allowed send starts a cooldown with a fresh countdown token; a denied one
    /// carries the running cooldown's token (nil for a cooldown written without one).
    public func reserve(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        let window = windowMilliseconds
        let ladder = ladderMilliseconds
        let clock = configuration.wallClock
        let token = CountdownToken.random()
        connection.evaluate(GateScripts.reserve, { args in
            args.append(3)
            args.appendNumberKey(prefix: prefix, purpose: purpose, phone: phone, suffix: "cooldown")
            args.appendNumberKey(prefix: prefix, purpose: purpose, phone: phone, suffix: "sends")
            args.append(token.key(prefix: prefix))
            args.append(Int(window))
            args.append(token.text)
            for step in ladder { args.append(Int(step)) }
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply, items.count == 4,
                      let allowed = items[0].integer, let milliseconds = items[1].integer, let sends = items[2].integer
                else { throw Self.unexpected(reply) }
                return Decision(
                    allowed: allowed == 1, reason: allowed == 1 ? nil : .cooldown, phone: phone, purpose: purpose,
                    retryAfterMilliseconds: Int64(milliseconds), serverTimeMilliseconds: clock(), sendsInWindow: sends,
                    countdownToken: items[3].string.flatMap { CountdownToken(validating: $0) })
            })
        })
    }

    /// The remaining time of the cooldown that issued `token`, or nil when the token is
    /// unknown, expired or stale (the cooldown was released or replaced). One script call.
    public func countdown(
        _ token: CountdownToken, completion: @escaping (Result<CountdownReading?, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        let clock = configuration.wallClock
        connection.evaluate(GateScripts.countdown, { args in
            args.append(1)
            args.append(token.key(prefix: prefix))
            args.append(token.text)
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard let pttl = reply.integer else { throw Self.unexpected(reply) }
                guard pttl > 0 else { return nil }
                return CountdownReading(retryAfterMilliseconds: Int64(pttl), serverTimeMilliseconds: clock())
            })
        })
    }

    /// Reads the number's cooldown without consuming anything.
    public func peek(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<CooldownStatus, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        let clock = configuration.wallClock
        let firstStep = ladderMilliseconds[0]
        connection.evaluate(GateScripts.peek, { args in
            args.append(1)
            args.appendNumberKey(prefix: prefix, purpose: purpose, phone: phone, suffix: "cooldown")
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard let pttl = reply.integer else { throw Self.unexpected(reply) }
                // -2: no cooldown. -1: a key without expiry (never written by us): the
                // next reserve gives it the first step, so report that much.
                let remaining = pttl == -1 ? firstStep : max(0, Int64(pttl))
                return CooldownStatus(
                    phone: phone, purpose: purpose, retryAfterMilliseconds: remaining, serverTimeMilliseconds: clock())
            })
        })
    }

    /// Ends the number's cooldown and refunds its send; `true` when one was running.
    public func release(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<Bool, GateError>) -> Void
    ) {
        let prefix = configuration.keyPrefix
        connection.evaluate(GateScripts.release, { args in
            args.append(2)
            args.appendNumberKey(prefix: prefix, purpose: purpose, phone: phone, suffix: "cooldown")
            args.appendNumberKey(prefix: prefix, purpose: purpose, phone: phone, suffix: "sends")
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
