-- KEYS: 1 cooldown (its value: the send's nonce), 2 sends (sorted set: one member per
--       send, its nonce, scored by its time), 3 the IP's sends (the same), 4 idempotency
--       record, 5 unused (a key of the number's slot), 6 idempotency link (which record
--       the running cooldown's send wrote, so a refund can void it).
-- ARGV: 1 window ms (0: sends are not counted), 2 max sends (0: none),
--       3 IP max sends (0: none), 4 IP window ms, 5 idempotency fingerprint
--       ('' : none), 6 idempotency lifetime ms, 7 fresh nonce,
--       8 the idempotency record's key name to link ('' : none), 9 unused ('0'),
--       10 a wait decided outside this slot (a cluster's per-IP cap; 0: none),
--       11... the cooldown ladder in ms.
-- Returns {allowed 1|0, reason, wait ms, sends in window, next cooldown ms,
--          Redis time ms, the cooldown's nonce, replayed 1|0}, or {-1} when the
--          idempotency key was used with a different request. The gate seals the
--          nonce into the answer's countdown token.
--
-- Every rule is checked before anything is written: a denied request consumes
-- nothing. The wait is the longest of every limit that binds the next send, and
-- the reason names the one that ends last. An allowed send's cooldown key lives
-- as long as the number's real wait (its ladder step, or until the oldest send
-- leaves the window when this send filled `max sends`), so peek and countdown
-- tokens show that wait; the answer's wait also covers the IP's cap when this
-- send filled it.
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
