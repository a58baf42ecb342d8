/// The Lua scripts that decide atomically inside Redis. Each touches only the keys
/// of one number and purpose, which share a hash tag and so one cluster slot.
enum GateScripts {
    /// KEYS: cooldown, sends, countdown token. ARGV: window ms (0: do not count), a fresh
    /// countdown token, then the ladder in ms.
    /// Returns {allowed 1|0, remaining or granted ms, sends in window, the running cooldown's token}.
    ///
    /// The cooldown key holds its countdown token (older keys hold '1'), and the token key
    /// names the cooldown key, both with the same expiry; `countdown` below checks that the
    /// two still point at each other, so a release or a later cooldown makes a token stale.
    /// Cluster mode: the token key lives in another slot than the number's keys, so it
    /// will need to share the number's hash tag or move to a second command.
    static let reserve = RedisScript("""
        local remaining = redis.call('PTTL', KEYS[1])
        local sends = tonumber(redis.call('GET', KEYS[2]) or '0')
        if remaining == -1 then
          remaining = tonumber(ARGV[3])
          redis.call('PEXPIRE', KEYS[1], remaining)
        end
        if remaining > 0 then return {0, remaining, sends, redis.call('GET', KEYS[1])} end
        local step = math.min(sends + 1, #ARGV - 2)
        local cooldown = tonumber(ARGV[step + 2])
        redis.call('SET', KEYS[1], ARGV[2], 'PX', cooldown)
        redis.call('SET', KEYS[3], KEYS[1], 'PX', cooldown)
        if ARGV[1] ~= '0' then
          sends = redis.call('INCR', KEYS[2])
          if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
        end
        return {1, cooldown, sends, ARGV[2]}
        """)

    /// KEYS: cooldown. Returns the cooldown's remaining ms (PTTL), never consuming.
    static let peek = RedisScript("""
        return redis.call('PTTL', KEYS[1])
        """)

    /// KEYS: cooldown, sends. Ends the cooldown and refunds its send from the count.
    /// Returns 1 when a cooldown was running, else 0.
    static let release = RedisScript("""
        if redis.call('DEL', KEYS[1]) == 0 then return 0 end
        local sends = tonumber(redis.call('GET', KEYS[2]) or '0')
        if sends > 1 then redis.call('DECR', KEYS[2]) elseif sends == 1 then redis.call('DEL', KEYS[2]) end
        return 1
        """)

    /// KEYS: countdown token. ARGV: the token. Returns the remaining ms of the cooldown the
    /// token was issued for, or -2 when the token is unknown, expired or stale (released,
    /// or replaced by a later cooldown of the same number).
    /// Reads the cooldown key named by the token key's value, which is not in KEYS: fine on
    /// one Redis; cluster mode will need the token key to share the number's hash tag.
    static let countdown = RedisScript("""
        local cooldown = redis.call('GET', KEYS[1])
        if not cooldown then return -2 end
        if redis.call('GET', cooldown) ~= ARGV[1] then return -2 end
        local remaining = redis.call('PTTL', cooldown)
        if remaining < 1 then return -2 end
        return remaining
        """)

    static let all = [reserve, peek, release, countdown]
}
