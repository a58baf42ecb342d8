-- KEYS: 1 cooldown (its value: the send's nonce; then, when an idempotency record
--       answered the send, a space and the record's key name, so a refund can void it),
--       2 sends (a string: the sends in the policy's window, oldest first, 29 characters
--       each: the send's time in 13 digits of ms, then its nonce), 3 the IP's sends
--       (sorted set: one member per send, its nonce, scored by its time), 4 idempotency
--       record.
-- ARGV: 1 window ms (0: sends are not counted), 2 max sends (0: none),
--       3 IP max sends (0: none), 4 IP window ms, 5 idempotency fingerprint
--       ('' : none), 6 idempotency lifetime ms, 7 fresh nonce,
--       8 the idempotency record's key name to link ('' : none), 9 the longest IP
--       window of any purpose in ms (the IP's set is shared by every purpose that caps
--       IPs: it is trimmed and kept by that window, and counted by this purpose's own),
--       10 a wait decided outside this slot (a cluster's per-IP cap; 0: none),
--       11... the cooldown ladder in ms.
-- Returns {allowed 1|0, reason, wait ms, sends in window, next cooldown ms,
--          Redis time ms, the cooldown's nonce, replayed 1|0}, or {-1} when the
--          idempotency key was used with a different request. The gate seals the
--          nonce into the answer's countdown token.
--
-- Every rule is read and the answer decided before anything is written: a denied
-- request consumes nothing. The wait is the longest of every limit that binds the next
-- send, and the reason names the one that ends last. An allowed send's cooldown key lives
-- as long as the number's real wait (its ladder step, or until the oldest send leaves
-- the window when this send filled `max sends`), so peek and countdown tokens show that
-- wait; the answer's wait also covers the IP's cap when this send filled it.
--
-- The idempotency record (KEYS[4]) is one string: the answer's fields separated by
-- spaces, the fingerprint last ("allowed reason wait sends next now nonce fingerprint";
-- idempotency-get.lua and idempotency-put.lua read and write the same). It is written
-- first, with `SET … NX GET`: a record already there is a replay (or another request's
-- key), and nothing else is written.
--
-- Cost: each command a script calls costs Redis more than the Lua around it, and each
-- write more again (it is appended to the AOF and sent to replicas). So the window is one
-- string read and written whole, not a sorted set (a read, and one write per send instead
-- of two); the idempotency link rides in the cooldown's value; the record's check is its
-- write. It keeps the last `max(max sends, ladder steps, 16)` sends, all any rule reads.
-- Numbers go to Redis as the strings they came in (ARGV, TIME): turning a Lua number into
-- a command's argument costs Redis a printf, more than a whole read command.
local t = redis.call('TIME')
local us = t[2]
local nowText = t[1] .. string.sub(string.rep('0', 6 - #us) .. us, 1, 3)
local now = tonumber(nowText)
local window, maxSends = tonumber(ARGV[1]), tonumber(ARGV[2])
local ipMax, ipWindow = tonumber(ARGV[3]), tonumber(ARGV[4])
local steps = #ARGV - 10
-- The sends still in the window, oldest first: at most the last `keepSends`, which is
-- more than any rule reads (max sends, or the ladder's steps) and bounds the key.
local kept, keepSends = {}, math.max(maxSends, steps, 16)
if window > 0 then
  local list = redis.call('GET', KEYS[2])
  if list then
    local since = now - window
    for at = 1, #list - 28, 29 do
      if tonumber(string.sub(list, at, at + 12)) > since then kept[#kept + 1] = string.sub(list, at, at + 28) end
    end
    while #kept > keepSends do table.remove(kept, 1) end
  end
end
local sends = #kept
-- The time of the send whose leaving the window lets the next one in, once the window
-- holds `max sends` (of `count` sends, the newest maybe not yet in `kept`).
local function freedAt(count)
  local at = kept[count - maxSends + 1]
  if at then return tonumber(string.sub(at, 1, 13)) + window - now end
  return window
end
local reason, wait = '', 0
local remaining = redis.call('PTTL', KEYS[1])
local repair = remaining == -1
if repair then remaining = tonumber(ARGV[10 + math.max(1, math.min(sends, steps))]) end
if remaining > 0 then reason, wait = 'cooldown', remaining end
if maxSends > 0 and sends >= maxSends then
  -- The send that filled the window stretched its cooldown to this same moment
  -- (give or take Redis's millisecond rounding): then max_sends is what binds.
  local f = freedAt(sends)
  if f + 2 >= wait then reason, wait = 'max_sends', math.max(f, wait) end
end
-- The IP's sends: the count may include stale ones (or, with purposes of other IP
-- windows, sends older than this one's), which matter only when the count reaches the
-- cap: then the sends older than the longest IP window of any purpose are removed (a
-- purpose with a short window never erases what a longer one still counts), and this
-- purpose counts those within its own window.
local ipCount, keep = 0, tonumber(ARGV[9])
if keep < ipWindow then keep = ipWindow end
local function ipFreedAt()
  local first = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
  if first[2] then return tonumber(first[2]) + ipWindow - now end
  return ipWindow
end
if ipMax > 0 then
  ipCount = redis.call('ZCARD', KEYS[3])
  if ipCount + 1 >= ipMax then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - keep)
    ipCount = redis.call('ZCOUNT', KEYS[3], '(' .. (now - ipWindow), '+inf')
    if ipCount >= ipMax then
      local f = ipFreedAt()
      if f > wait then reason, wait = 'ip_limit', f end
    end
  end
end
local outside = tonumber(ARGV[10])
if outside > wait then reason, wait = 'ip_limit', outside end
local allowed, token, hold = 0, '', nil
if reason == '' then
  allowed, token = 1, ARGV[7]
  sends = sends + 1
  hold = ARGV[10 + math.max(1, math.min(sends, steps))]
  if window > 0 and maxSends > 0 and sends >= maxSends then
    local f = freedAt(sends)
    if f > tonumber(hold) then hold = tostring(f) end
  end
  wait = hold
  -- The send that fills the IP's cap: the next one from the IP waits for it too.
  if ipMax > 0 and ipCount + 1 >= ipMax then
    local f = ipCount == 0 and ipWindow or ipFreedAt()
    if f > tonumber(wait) then wait = f end
  end
elseif remaining > 0 then
  -- The running cooldown's nonce: its value's first 16 characters (after them a plain
  -- cooldown's key holds its deadline, a scripted one its idempotency link); or 'locked'
  -- (verify.lua): then the lock is the reason, whatever else refuses, and the wait at
  -- least the lock's.
  local held = redis.call('GET', KEYS[1]) or ''
  if string.sub(held, 1, 6) == 'locked' then
    reason, wait = 'locked', math.max(wait, remaining)
  elseif reason ~= 'ip_limit' then
    token = string.sub(held, 1, 16)
  end
end
local nextCooldown = ARGV[10 + math.min(sends + 1, steps)]
local fingerprint = ARGV[5]
if fingerprint ~= '' then
  -- The answer as one string, the fingerprint last (it may hold spaces). A denial is kept
  -- for its wait, at most a minute (a retry after a lost answer comes within seconds):
  -- denials cost nothing else, so fresh keys on denied requests must not fill Redis.
  local keepFor = ARGV[6]
  if allowed == 0 then keepFor = tostring(math.max(1, math.min(tonumber(keepFor), tonumber(wait), 60000))) end
  local record = redis.call('SET', KEYS[4], table.concat({allowed, reason, wait, sends, nextCooldown, nowText, token, fingerprint}, ' '),
    'NX', 'PX', keepFor, 'GET')
  if record then
    local a, r, ms, s, n, at, tok, fp = string.match(record, '^(%-?%d+) (%S*) (%-?%d+) (%-?%d+) (%-?%d+) (%-?%d+) (%S*) (.*)$')
    if fp ~= fingerprint then return {-1} end
    return {tonumber(a), r, tonumber(ms), tonumber(s), tonumber(n), tonumber(at), tok, 1}
  end
end
if allowed == 1 then
  if window > 0 then
    kept[#kept + 1] = nowText .. token
    if #kept > keepSends then table.remove(kept, 1) end
    redis.call('SET', KEYS[2], table.concat(kept), 'PX', ARGV[1])
  end
  if ARGV[8] ~= '' then
    redis.call('SET', KEYS[1], token .. ' ' .. ARGV[8], 'PX', hold)
  else
    redis.call('SET', KEYS[1], token, 'PX', hold)
  end
  if ipMax > 0 then
    redis.call('ZADD', KEYS[3], nowText, token)
    -- The set outlives its newest send by the longest IP window, plus at most an eighth
    -- of it: its expiry is renewed only when less than that is left (never shortened).
    if redis.call('PTTL', KEYS[3]) < keep then
      redis.call('PEXPIRE', KEYS[3], keep + math.floor(keep / 8))
    end
  end
elseif repair then
  redis.call('PEXPIRE', KEYS[1], tostring(remaining))
end
return {allowed, reason, tonumber(wait), sends, tonumber(nextCooldown), now, token, 0}
