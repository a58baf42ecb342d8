extension RedisTestClient {
    /// Moves the gate's state in this Redis `milliseconds` into the past, which to the gate's
    /// scripts is the same as that much time passing: every key's time to live shrinks by it
    /// (a key with less left is deleted, as its expiry would), and every time the gate stamped
    /// by Redis's clock moves back by it: sorted-set scores (the IP's sends, refunds), the
    /// sends a number's window key holds (`…:window`, see `windowSends`), a cooldown's
    /// deadline (in its key's value, or the window's: `heldCooldown`), and every hash
    /// field named `<letter>:<ms>` (the pumping guard names its buckets by their start on
    /// Redis's clock; fields that land on one name are added up). Atomic, in one script.
    ///
    /// Tests use it instead of sleeping through a cooldown or a window: the policy's durations
    /// can then be minutes long, so a machine that stalls for seconds cannot end one early.
    /// Only for a test's own Redis: it walks every key that matches `pattern`.
    public func advanceTime(byMilliseconds milliseconds: Int, keys pattern: String = "*") throws {
        precondition(milliseconds > 0, "time only moves forward")
        let reply = try command("EVAL", Self.timeTravelScript, "0", pattern, String(milliseconds))
        guard reply.integer != nil else {
            throw TestSupportError.protocolViolation.with("moving time forward at \(endpoint) failed: \(reply)")
        }
    }

    /// Lets `key`'s time to live run out now, moving the rest of the state with it (see
    /// `advanceTime(byMilliseconds:keys:)`). Returns the milliseconds it moved; throws when the
    /// key has no time to live.
    @discardableResult
    public func runOut(_ key: String) throws -> Int {
        guard let left = try command("PTTL", key).integer, left > 0 else {
            throw TestSupportError.protocolViolation.with("\(key) has no time to live to run out")
        }
        try advanceTime(byMilliseconds: left)
        return left
    }

    /// Returns how many keys it changed.
    private static let timeTravelScript = """
        local by, changed = tonumber(ARGV[2]), 0
        -- A cooldown's value with its deadline (12 hex digits of ms after the nonce) moved back.
        local function shifted(value)
          local deadline = string.sub(value, 1, 6) ~= 'locked' and tonumber(string.sub(value, 17, 28), 16)
          if not deadline or #value < 28 then return value end
          return string.sub(value, 1, 16) .. string.format('%012x', deadline - by) .. string.sub(value, 29)
        end
        for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
          if redis.call('TYPE', key).ok == 'zset' then
            local all = redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES')
            for i = 1, #all, 2 do
              redis.call('ZADD', key, string.format('%.0f', tonumber(all[i + 1]) - by), all[i])
            end
          elseif string.sub(key, -7) == ':window' then
            local sends, moved = redis.call('GET', key), {}
            local cut = string.find(sends, ';', 1, true)
            local own = cut and string.sub(sends, cut + 1) or nil
            if cut then sends = string.sub(sends, 1, cut - 1) end
            for at = 1, #sends - 28, 29 do
              moved[#moved + 1] = string.format('%013.0f', tonumber(string.sub(sends, at, at + 12)) - by)
                .. string.sub(sends, at + 13, at + 28)
            end
            if own then moved[#moved + 1] = ';' .. shifted(own) end
            redis.call('SET', key, table.concat(moved), 'KEEPTTL')
          elseif string.sub(key, -9) == ':cooldown' then
            local value = redis.call('GET', key)
            local moved = shifted(value)
            if moved ~= value then redis.call('SET', key, moved, 'KEEPTTL') end
          elseif redis.call('TYPE', key).ok == 'hash' then
            local all = redis.call('HGETALL', key)
            for i = 1, #all, 2 do
              local kind, at = string.match(all[i], '^(%a):(%-?%d+)$')
              if kind then
                redis.call('HDEL', key, all[i])
                redis.call('HINCRBY', key, kind .. ':' .. string.format('%.0f', tonumber(at) - by), all[i + 1])
              end
            end
          end
          local left = redis.call('PTTL', key)
          if left > 0 then
            if left <= by then redis.call('DEL', key) else redis.call('PEXPIRE', key, tostring(left - by)) end
          end
          changed = changed + 1
        end
        return changed
        """
}
