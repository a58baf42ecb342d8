import RedisClient

/// The Lua scripts that decide atomically inside Redis. Times and windows are
/// Redis's own (`TIME`, `PTTL`): the gate's clock never decides.
///
/// Keys of one number and purpose share a hash tag (one cluster slot); per-IP and
/// idempotency keys have slots of their own, so on Redis Cluster they take steps of
/// their own (see GateWorker+Cluster.swift). The default policy needs no script
/// (GateWorker+Cooldown.swift), and countdown tokens no key (CountdownTokenCipher).
enum GateScripts {
    /// KEYS: 1 cooldown (its value: the send's nonce), 2 sends (sorted set: one member per
    ///       send, its nonce, scored by its time), 3 the IP's sends (the same), 4 idempotency
    ///       record, 5 unused (a key of the number's slot), 6 idempotency link (which record
    ///       the running cooldown's send wrote, so a refund can void it).
    /// ARGV: 1 window ms (0: sends are not counted), 2 max sends (0: none),
    ///       3 IP max sends (0: none), 4 IP window ms, 5 idempotency fingerprint
    ///       ('' : none), 6 idempotency lifetime ms, 7 fresh nonce,
    ///       8 the idempotency record's key name to link ('' : none), 9 unused ('0'),
    ///       10 a wait decided outside this slot (a cluster's per-IP cap; 0: none),
    ///       11... the cooldown ladder in ms.
    /// Returns {allowed 1|0, reason, wait ms, sends in window, next cooldown ms,
    ///          Redis time ms, the cooldown's nonce, replayed 1|0}, or {-1} when the
    ///          idempotency key was used with a different request. The gate seals the
    ///          nonce into the answer's countdown token.
    ///
    /// Every rule is checked before anything is written: a denied request consumes
    /// nothing. The wait is the longest of every limit that binds the next send, and
    /// the reason names the one that ends last. An allowed send's cooldown key lives
    /// as long as the number's real wait (its ladder step, or until the oldest send
    /// leaves the window when this send filled `max sends`), so peek and countdown
    /// tokens show that wait; the answer's wait also covers the IP's cap when this
    /// send filled it.
    static let reserve = RedisScript("""
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        if ARGV[5] ~= '' then
          local v = redis.call('HMGET', KEYS[4], 'fp', 'a', 'r', 'ms', 's', 'n', 't', 'tok')
          if v[1] then
            if v[1] ~= ARGV[5] then return {-1} end
            return {tonumber(v[2]), v[3], tonumber(v[4]), tonumber(v[5]), tonumber(v[6]), tonumber(v[7]), v[8], 1}
          end
        end
        local window, maxSends = tonumber(ARGV[1]), tonumber(ARGV[2])
        local ipMax, ipWindow = tonumber(ARGV[3]), tonumber(ARGV[4])
        local steps = #ARGV - 10
        local function step(n) return tonumber(ARGV[10 + math.max(1, math.min(n, steps))]) end
        local function frees(key, span)
          local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
          return tonumber(oldest[2]) + span - now
        end
        local sends = 0
        if window > 0 then
          redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
          sends = redis.call('ZCARD', KEYS[2])
        end
        local reason, wait = '', 0
        local remaining = redis.call('PTTL', KEYS[1])
        if remaining == -1 then
          remaining = step(sends)
          redis.call('PEXPIRE', KEYS[1], remaining)
        end
        if remaining > 0 then reason, wait = 'cooldown', remaining end
        if maxSends > 0 and sends >= maxSends then
          -- The send that filled the window stretched its cooldown to this same moment
          -- (give or take Redis's millisecond rounding): then max_sends is what binds.
          local f = frees(KEYS[2], window)
          if f + 2 >= wait then reason, wait = 'max_sends', math.max(f, wait) end
        end
        local ipCount = 0
        if ipMax > 0 then
          redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ipWindow)
          ipCount = redis.call('ZCARD', KEYS[3])
          if ipCount >= ipMax then
            local f = frees(KEYS[3], ipWindow)
            if f > wait then reason, wait = 'ip_limit', f end
          end
        end
        local outside = tonumber(ARGV[10])
        if outside > wait then reason, wait = 'ip_limit', outside end
        local allowed, token = 0, ''
        if reason == '' then
          allowed, token = 1, ARGV[7]
          sends = sends + 1
          local hold = step(sends)
          if window > 0 then
            redis.call('ZADD', KEYS[2], now, token)
            redis.call('PEXPIRE', KEYS[2], window)
            if maxSends > 0 and sends >= maxSends then hold = math.max(hold, frees(KEYS[2], window)) end
          end
          redis.call('SET', KEYS[1], token, 'PX', hold)
          if ARGV[8] ~= '' then redis.call('SET', KEYS[6], token .. ' ' .. ARGV[8], 'PX', hold) end
          wait = hold
          if ipMax > 0 then
            redis.call('ZADD', KEYS[3], now, token)
            redis.call('PEXPIRE', KEYS[3], ipWindow)
            if ipCount + 1 >= ipMax then wait = math.max(wait, frees(KEYS[3], ipWindow)) end
          end
        elseif reason ~= 'ip_limit' then
          token = redis.call('GET', KEYS[1]) or ''
        end
        local nextCooldown = tonumber(ARGV[10 + math.min(sends + 1, steps)])
        if ARGV[5] ~= '' then
          redis.call('HSET', KEYS[4], 'fp', ARGV[5], 'a', allowed, 'r', reason, 'ms', wait, 's', sends,
            'n', nextCooldown, 't', now, 'tok', token)
          redis.call('PEXPIRE', KEYS[4], ARGV[6])
        end
        return {allowed, reason, wait, sends, nextCooldown, now, token, 0}
        """)

    /// KEYS: cooldown, sends. ARGV: window ms, max sends (0: none). Returns {wait ms,
    /// Redis time ms}, never writing: the cooldown's PTTL (-2 none, -1 no expiry), or,
    /// when the window already holds `max sends`, until its oldest send leaves it if that
    /// is later. The cooldown key normally lasts that long already; this also covers
    /// windows filled before it did, or under a higher `max sends`.
    static let peek = RedisScript("""
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local wait = redis.call('PTTL', KEYS[1])
        local window, maxSends = tonumber(ARGV[1]), tonumber(ARGV[2])
        if maxSends > 0 and redis.call('ZCOUNT', KEYS[2], '(' .. (now - window), '+inf') >= maxSends then
          local oldest = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
          wait = math.max(wait, tonumber(oldest[2]) + window - now)
        end
        return {wait, now}
        """)

    /// KEYS: 1 cooldown, 2 sends, 3 refunds (sorted set of refunded sends' tokens, by
    ///       time), 4 idempotency link.
    /// ARGV: 1 refund window ms, 2 max refunds (at least 1), 3 '1' to delete the linked
    ///       idempotency record here (one Redis), '0' to return its name (a cluster, where
    ///       it lives in another slot), 4 the channel releases are announced on.
    /// Ends the running cooldown and refunds its send (that send leaves the window, so
    /// the ladder step and the count go back by one) unless the window already holds
    /// `max refunds` refunds; the refund is recorded, so at most that many sends are
    /// given back per window. Also voids the idempotency record of the refunded send.
    /// Publishes the value the cooldown key held (the nonce its countdown tokens carry) on the channel,
    /// in the same script, so every gate ends the event streams that follow it.
    /// Returns {1, 0, voided record name or ''} refunded, {0, 0, ''} when no cooldown
    /// runs (nothing is consumed), {-1, ms until the oldest refund leaves the window, ''}
    /// past the limit (nothing changes).
    static let release = RedisScript("""
        local token = redis.call('GET', KEYS[1])
        if not token then return {0, 0, ''} end
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local window = tonumber(ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
        if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[2]) then
          local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
          return {-1, tonumber(oldest[2]) + window - now, ''}
        end
        redis.call('DEL', KEYS[1])
        redis.call('PUBLISH', ARGV[4], token)
        redis.call('ZREM', KEYS[2], token)
        redis.call('ZADD', KEYS[3], now, token)
        redis.call('PEXPIRE', KEYS[3], window)
        local voided = ''
        local link = redis.call('GET', KEYS[4])
        if link then
          local space = string.find(link, ' ', 1, true)
          if space and string.sub(link, 1, space - 1) == token then
            voided = string.sub(link, space + 1)
            if ARGV[3] == '1' then redis.call('DEL', voided) end
          end
          redis.call('DEL', KEYS[4])
        end
        return {1, 0, voided}
        """)

    // MARK: Redis Cluster: the steps that live in slots of their own

    /// KEYS: the IP's sends. ARGV: cap, window ms, member (the send's countdown token,
    /// unique to it). Takes a share of the IP's cap before the number is decided:
    /// {1, ms until the IP may send again once this share counts (0 while it is under its
    /// cap)} or {0, wait ms}.
    static let ipTake = RedisScript("""
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local cap, window = tonumber(ARGV[1]), tonumber(ARGV[2])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
        local count = redis.call('ZCARD', KEYS[1])
        if count >= cap then
          local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
          return {0, tonumber(oldest[2]) + window - now}
        end
        redis.call('ZADD', KEYS[1], now, ARGV[3])
        redis.call('PEXPIRE', KEYS[1], window)
        if count + 1 < cap then return {1, 0} end
        local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
        return {1, tonumber(oldest[2]) + window - now}
        """)

    /// KEYS: idempotency record. ARGV: fingerprint. Returns the stored answer like
    /// `reserve` does ({..., replayed 1}), {-1} for another request, or {} when none.
    static let idempotencyGet = RedisScript("""
        local v = redis.call('HMGET', KEYS[1], 'fp', 'a', 'r', 'ms', 's', 'n', 't', 'tok')
        if not v[1] then return {} end
        if v[1] ~= ARGV[1] then return {-1} end
        return {tonumber(v[2]), v[3], tonumber(v[4]), tonumber(v[5]), tonumber(v[6]), tonumber(v[7]), v[8], 1}
        """)

    /// KEYS: idempotency record. ARGV: fingerprint, lifetime ms, then the answer's
    /// fields. Keeps the first answer stored.
    static let idempotencyPut = RedisScript("""
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'a', ARGV[3], 'r', ARGV[4], 'ms', ARGV[5], 's', ARGV[6],
          'n', ARGV[7], 't', ARGV[8], 'tok', ARGV[9])
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return 1
        """)

    /// KEYS: a cooldown (which a countdown token names). ARGV: the nonce the token holds.
    /// {remaining ms, Redis time ms, the cooldown's value (what a release publishes)}, or
    /// {-2, ...} when the cooldown is gone or holds another nonce (it was released, or
    /// replaced by a later send).
    static let countdownOfCooldown = RedisScript("""
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local value = redis.call('GET', KEYS[1])
        if value ~= ARGV[1] then return {-2, now} end
        local remaining = redis.call('PTTL', KEYS[1])
        if remaining < 1 then return {-2, now} end
        return {remaining, now, value}
        """)

    static let all = [reserve, peek, release, ipTake, idempotencyGet, idempotencyPut, countdownOfCooldown]
}
