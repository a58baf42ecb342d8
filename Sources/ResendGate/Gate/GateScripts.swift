/// The Lua scripts that decide atomically inside Redis. Each touches only the keys
/// of one number and purpose, which share a hash tag and so one cluster slot.
enum GateScripts {
    /// KEYS: cooldown, sends. ARGV: window ms (0: do not count), then the ladder in ms.
    /// Returns {allowed 1|0, remaining or granted ms, sends in window}.
    static let reserve = RedisScript("""
        local remaining = redis.call('PTTL', KEYS[1])
        local sends = tonumber(redis.call('GET', KEYS[2]) or '0')
        if remaining == -1 then
          remaining = tonumber(ARGV[2])
          redis.call('PEXPIRE', KEYS[1], remaining)
        end
        if remaining > 0 then return {0, remaining, sends} end
        local step = math.min(sends + 1, #ARGV - 1)
        local cooldown = tonumber(ARGV[step + 1])
        redis.call('SET', KEYS[1], '1', 'PX', cooldown)
        if ARGV[1] ~= '0' then
          sends = redis.call('INCR', KEYS[2])
          if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
        end
        return {1, cooldown, sends}
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

    static let all = [reserve, peek, release]
}
