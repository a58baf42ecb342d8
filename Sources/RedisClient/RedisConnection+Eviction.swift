// MARK: - Refusing a Redis that may evict keys

/// A Redis whose `maxmemory-policy` is not `noeviction` drops keys when it reaches
/// `maxmemory`, the volatile policies exactly those with a TTL: the cooldowns. An
/// evicted cooldown is a second code sent at once, silently. So every connection reads
/// the policy with `INFO memory` (which managed services allow where `CONFIG` is off)
/// in its handshake, before any caller's command goes out, and again every
/// `evictionCheckInterval` while it is up; while the policy evicts (or Redis would not
/// say), `send` and `evaluate` fail at once as `evicting`, unless
/// `allowEvictingRedis` allows it. A change is logged once, not per command.
extension RedisConnection {
    /// The policy that keeps every key: Redis answers writes past `maxmemory` with an error.
    static let keepingPolicy = "noeviction"

    /// The value of `maxmemory_policy:` in an `INFO memory` reply, or nil if it has none.
    static func maxmemoryPolicy(inInfo text: String) -> String? {
        // Lines end in CRLF, one Character in Swift: split on any newline.
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("maxmemory_policy:") {
            let value = line.dropFirst("maxmemory_policy:".count)
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }

    /// What an `INFO memory` reply says of the policy: its name, or why it is not known
    /// (an unknown policy counts as evicting: the gate cannot show that it keeps keys).
    static func evictionPolicy(from result: Result<RedisReply, RedisError>) -> String {
        switch result {
        case .success(let reply):
            guard let text = reply.string else { return "unknown (INFO memory answered \(reply))" }
            return maxmemoryPolicy(inInfo: text) ?? "unknown (INFO memory names no maxmemory_policy)"
        case .failure(let error):
            return "unknown (INFO memory refused: \(error.message))"
        }
    }

    /// Redis refused the command because the connection is not authenticated (no password,
    /// or a wrong one): the set-up's failure, not a policy Redis would not show.
    static func isAuthenticationRefusal(_ error: RedisError) -> Bool {
        error.message.contains("NOAUTH") || error.message.contains("WRONGPASS")
    }

    /// The handshake's `INFO memory` step.
    func appendEvictionCheck(_ arguments: inout RedisArguments) {
        arguments.append("INFO", "memory")
    }

    /// Takes a policy read at a connect or a periodic check: updates the refusal, the
    /// statistics and, when it changed, the log.
    func noteEvictionPolicy(_ policy: String) {
        let evicts = policy != Self.keepingPolicy
        let refusing = evicts && !configuration.allowEvictingRedis
        let reason = refusing
            ? "Redis \(address) may evict keys (maxmemory-policy \(policy)): an evicted cooldown would let a code be sent twice; "
                + "set maxmemory-policy noeviction, or allow it with --allow-evicting-redis"
            : nil
        evictionRefusal = reason.map { RedisError(.evicting, $0) }
        statistics.setEviction(evicts: evicts, refusal: reason)
        if policy != evictionPolicySeen {
            let previous = evictionPolicySeen
            evictionPolicySeen = policy
            if refusing {
                logger.error("redis \(address): maxmemory-policy is \(policy), which may evict cooldowns: sends answer 503 store_evicts_keys until it is noeviction (or --allow-evicting-redis)")
            } else if evicts {
                logger.warning("redis \(address): maxmemory-policy is \(policy), which may evict cooldowns; allowed by --allow-evicting-redis")
            } else if previous != nil {
                logger.info("redis \(address): maxmemory-policy is \(policy) again: serving")
            }
        }
        onEvictionChange?()
    }

    /// Reads the policy again (the eviction timer); the next read follows its reply.
    func checkEviction() {
        guard state == .ready, let context else { return }
        let generationSent = generation
        arguments.reset()
        appendEvictionCheck(&arguments)
        enqueue(context, Pending(deadline: .now + configuration.commandTimeout, completion: { [unowned self] result in
            // A failure other than Redis's own answer comes from `drop` (maybe in `deinit`):
            // the next connect reads the policy anew.
            if case .failure(let error) = result, error.kind != .server { return }
            guard self.generation == generationSent else { return }
            self.noteEvictionPolicy(Self.evictionPolicy(from: result))
            self.evictionTimer.schedule(after: self.configuration.evictionCheckInterval)
        }, retry: nil))
    }
}
