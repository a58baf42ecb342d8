-- KEYS: 1 cooldown (its value: the send's nonce, then its deadline in 12 hex digits of
--       ms, as a plain cooldown's (`CooldownValue`); then, when an idempotency record
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
--       11 the rules in observe mode, comma-separated (of cooldown, max_sends,
--       ip_limit; '' : none), 12... the cooldown ladder in ms.
-- Returns {allowed 1|0, reason, wait ms, sends in window, next cooldown ms,
--          Redis time ms, the cooldown's nonce, replayed 1|0, the observed rules
--          comma-separated ('' : none)}, or {-1} when the idempotency key was used with a
--          different request. The gate seals the nonce into the answer's countdown token.
--
-- Observe mode: a rule in ARGV[11] that would refuse does not; its reason goes into the
-- observed list and the other rules decide. Such a send starts a new cooldown (a new
-- nonce), counts in the window, and is not added to a full IP's set (the set stays
-- bounded by the cap). A lock always refuses (the gate refuses `locked` in observe mode).
--
-- Every rule is read and the answer decided before anything is written: a denied
-- request consumes nothing. The wait is the longest of every limit that binds the next
-- send, and the reason names the one that ends last. An allowed send's cooldown key lives
-- as long as the number's real wait (its ladder step, or until the oldest send leaves
-- the window when this send filled `max sends`), so peek and countdown tokens show that
-- wait; the answer's wait also covers the IP's cap when this send filled it.
--
-- The idempotency record (KEYS[4]) is one string: the answer's fields separated by
-- spaces, the fingerprint last ("allowed reason wait sends next now nonce observed
-- fingerprint"; idempotency-get.lua and idempotency-put.lua read and write the same; a
-- record of an older version, without `observed`, is read too). It is written
-- first, with `SET … NX GET`: a record already there is a replay (or another request's
-- key), and nothing else is written.
--
-- Cost: each command a script calls costs Redis more than the Lua around it (its
-- arguments and reply are converted, the command looked up and checked), and each write
-- more again (it is appended to the AOF and sent to replicas). So the window is one string
-- read and written whole, not a sorted set (one write per send instead of two); it is read
-- with the cooldown's value in one MGET, and that value holds the cooldown's deadline, so
-- the wait needs no PTTL; the idempotency link rides in the cooldown's value; the record's
-- check is its write. The window keeps the last `max(max sends, ladder steps, 16)` sends,
-- all any rule reads.
-- Numbers go to Redis as the strings they came in (ARGV, TIME): turning a Lua number into
-- a command's argument costs Redis a printf, more than a whole read command.
local t = redis.call('TIME')
local nowText = t[1] .. string.sub('00000' .. t[2], -6, -4)
local now = nowText + 0
local window, maxSends = ARGV[1] + 0, ARGV[2] + 0
local ipMax, ipWindow = ARGV[3] + 0, ARGV[4] + 0
local steps = #ARGV - 11
-- The rules in observe mode (none, most often: then no string is searched or made), and
-- those of them that would have refused this send (`observedText`, comma-separated).
local watched = ARGV[11]
local watchCooldown, watchMax, watchIP, observedText = false, false, false, ''
if watched ~= '' then
  watched = ',' .. watched .. ','
  watchCooldown = string.find(watched, ',cooldown,', 1, true) ~= nil
  watchMax = string.find(watched, ',max_sends,', 1, true) ~= nil
  watchIP = string.find(watched, ',ip_limit,', 1, true) ~= nil
end
local function observe(rule)
  observedText = observedText == '' and rule or observedText .. ',' .. rule
end
-- The sends still in the window, as the key holds them (`list`), most often oldest first:
-- at most the last `keepSends`, more than any rule reads (max sends, or the ladder's
-- steps), which bounds the key. Every send's time is read, since a clock that stepped
-- back (or a failover to a replica with a slower one) can leave an old send after a new
-- one; the list is split and joined again only when one of them left the window.
local list, keepSends = '', math.max(maxSends, steps, 16)
-- The cooldown's value and the window, in one read.
local held = redis.call('MGET', KEYS[1], KEYS[2])
if window > 0 and held[2] then
  list = held[2]
  -- Whole sends only (a value cut short loses its last fragment).
  local since, whole, stale = now - window, #list - #list % 29, false
  for at = 1, whole - 28, 29 do
    if string.sub(list, at, at + 12) + 0 <= since then
      stale = true
      break
    end
  end
  if stale then
    local kept = {}
    for at = 1, whole - 28, 29 do
      if string.sub(list, at, at + 12) + 0 > since then kept[#kept + 1] = string.sub(list, at, at + 28) end
    end
    list = table.concat(kept)
  elseif whole < #list then
    list = string.sub(list, 1, whole)
  end
  if #list > keepSends * 29 then list = string.sub(list, -keepSends * 29) end
end
local sends = #list / 29
-- The time of the `i`th send in the list (1: the oldest).
local function sentAt(i) return string.sub(list, i * 29 - 28, i * 29 - 16) + 0 end
local reason, wait = '', 0
-- A running cooldown refuses (its key exists: Redis alone decides that). Its wait is the
-- deadline its value holds after the nonce, when that is one the gate could have set
-- (ahead by at most the longest hold, give or take a second of another gate's clock);
-- else, or for a lock, the key's PTTL.
local value, remaining, repair, locked = held[1], 0, false, false
if value then
  locked = string.sub(value, 1, 6) == 'locked'
  local deadline = not locked and tonumber(string.sub(value, 17, 28), 16)
  local longest = window
  for i = 12, #ARGV do longest = math.max(longest, ARGV[i] + 0) end
  if deadline and deadline > now and deadline - now <= longest + 1000 then
    remaining = deadline - now
  else
    remaining = redis.call('PTTL', KEYS[1])
    repair = remaining == -1
    if repair then remaining = ARGV[11 + math.max(1, math.min(sends, steps))] + 0 end
  end
  if remaining < 1 then remaining = 1 end
  if locked or not watchCooldown then
    reason, wait = 'cooldown', remaining
  else
    observe('cooldown')
  end
end
if maxSends > 0 and sends >= maxSends and watchMax then
  observe('max_sends')
elseif maxSends > 0 and sends >= maxSends then
  -- The send that filled the window stretched its cooldown to this same moment
  -- (give or take Redis's millisecond rounding): then max_sends is what binds. The
  -- window lets the next send in when the send `max sends` back from the newest leaves.
  local f = sentAt(sends - maxSends + 1) + window - now
  if f + 2 >= wait then reason, wait = 'max_sends', math.max(f, wait) end
end
-- The IP's sends: the count may include stale ones (or, with purposes of other IP
-- windows, sends older than this one's), which matter only when the count reaches the
-- cap: then the sends older than the longest IP window of any purpose are removed (a
-- purpose with a short window never erases what a longer one still counts), and this
-- purpose counts those within its own window.
local ipCount, ipFull, keep = 0, false, ARGV[9] + 0
if keep < ipWindow then keep = ipWindow end
if ipMax > 0 then
  ipCount = redis.call('ZCARD', KEYS[3])
  if ipCount + 1 >= ipMax then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - keep)
    ipCount = redis.call('ZCOUNT', KEYS[3], '(' .. (now - ipWindow), '+inf')
    if ipCount >= ipMax then
      local first = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
      local f = first[2] + ipWindow - now
      ipFull = true
      if watchIP then
        observe('ip_limit')
      elseif f > wait then
        reason, wait = 'ip_limit', f
      end
    end
  end
end
local outside = ARGV[10] + 0
if outside > wait then reason, wait = 'ip_limit', outside end
-- An allowed send's hold: how long its cooldown key lives, as the text the key's PX
-- takes (`hold`, a ladder step as it came, most often) and in ms (`holdMs`).
local allowed, token, hold, holdMs = 0, '', nil, 0
if reason == '' then
  allowed, token = 1, ARGV[7]
  sends = sends + 1
  hold = ARGV[11 + math.max(1, math.min(sends, steps))]
  holdMs = hold + 0
  if window > 0 and maxSends > 0 and sends >= maxSends and not watchMax then
    -- This send fills the window (it is not in `list` yet; with `max sends` 1, it is the one).
    local i = sends - maxSends + 1
    local f = i < sends and sentAt(i) + window - now or window
    if f > holdMs then hold, holdMs = string.format('%d', f), f end
  end
  wait = holdMs
  -- The send that fills the IP's cap: the next one from the IP waits for it too (unless
  -- the cap is only observed).
  if ipMax > 0 and ipCount + 1 >= ipMax and not watchIP then
    local f = ipWindow
    if ipCount > 0 then
      local first = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
      f = first[2] + ipWindow - now
    end
    if f > wait then wait = f end
  end
elseif locked then
  -- Wrong codes locked the number (verify.lua): the lock is the reason, whatever else
  -- refuses, and the wait at least the lock's.
  reason, wait = 'locked', math.max(wait, remaining)
elseif value and reason ~= 'ip_limit' then
  -- The running cooldown's nonce: its value's first 16 characters.
  token = string.sub(value, 1, 16)
end
local nextCooldown = ARGV[11 + math.min(sends + 1, steps)]
local fingerprint = ARGV[5]
if fingerprint ~= '' then
  -- The answer as one string, the fingerprint last (it may hold spaces). A denial is kept
  -- for its wait, at most a minute (a retry after a lost answer comes within seconds):
  -- denials cost nothing else, so fresh keys on denied requests must not fill Redis.
  local keepFor = ARGV[6]
  -- Numbers become text without Lua's own conversion (a printf of a float, as costly as
  -- a command): the allowed wait is most often the ladder step as it came.
  local waitText = (allowed == 1 and wait == holdMs) and hold or string.format('%d', wait)
  local sendsText = sends < 10 and string.sub('0123456789', sends + 1, sends + 1) or string.format('%d', sends)
  if allowed == 0 then keepFor = string.format('%d', math.max(1, math.min(keepFor + 0, wait, 60000))) end
  local record = redis.call('SET', KEYS[4],
    (allowed == 1 and '1' or '0') .. ' ' .. reason .. ' ' .. waitText .. ' ' .. sendsText .. ' ' .. nextCooldown .. ' '
      .. nowText .. ' ' .. token .. ' ' .. observedText .. ' ' .. fingerprint,
    'NX', 'PX', keepFor, 'GET')
  if record then
    local a, r, ms, s, n, at, tok, obs, fp = string.match(record, '^(%-?%d+) (%S*) (%-?%d+) (%-?%d+) (%-?%d+) (%-?%d+) (%S*) (%S*) (.*)$')
    if fp ~= fingerprint then
      -- A record an older version wrote, without the observed rules.
      a, r, ms, s, n, at, tok, fp = string.match(record, '^(%-?%d+) (%S*) (%-?%d+) (%-?%d+) (%-?%d+) (%-?%d+) (%S*) (.*)$')
      obs = ''
      if fp ~= fingerprint then return {-1} end
    end
    return {tonumber(a), r, tonumber(ms), tonumber(s), tonumber(n), tonumber(at), tok, 1, obs}
  end
end
if allowed == 1 then
  if window > 0 then
    list = list .. nowText .. token
    if #list > keepSends * 29 then list = string.sub(list, 30) end
    redis.call('SET', KEYS[2], list, 'PX', ARGV[1])
  end
  -- The nonce, the deadline in 12 hex digits of ms (as a plain cooldown's), and the link.
  local deadline = string.format('%012x', now + holdMs)
  if ARGV[8] ~= '' then
    redis.call('SET', KEYS[1], token .. deadline .. ' ' .. ARGV[8], 'PX', hold)
  else
    redis.call('SET', KEYS[1], token .. deadline, 'PX', hold)
  end
  -- An observed cap that is full counts nothing more: the set stays bounded by the cap.
  if ipMax > 0 and not ipFull then
    redis.call('ZADD', KEYS[3], nowText, token)
    -- The set outlives its newest send by the longest IP window, plus at most an eighth
    -- of it: its expiry is renewed only when less than that is left (never shortened).
    if redis.call('PTTL', KEYS[3]) < keep then
      redis.call('PEXPIRE', KEYS[3], keep + math.floor(keep / 8))
    end
  end
elseif repair then
  redis.call('PEXPIRE', KEYS[1], string.format('%d', remaining))
end
return {allowed, reason, wait, sends, nextCooldown + 0, now, token, 0, observedText}
