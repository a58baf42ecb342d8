-- The decision of a policy other than the default one, one copy per policy: `ReserveScripts`
-- writes the policy's constants into the block below (between its marker lines), since each
-- argument of a call costs Redis about as much as a small command; and a copy without the
-- IP cap for requests without a client address and for a cluster (where the cap is a step
-- of its own). As written here, the block is the every-rule policy deploy/bench measures
-- (ladder 60 s, 120 s, 300 s; 5 sends a day; 100 000 sends an hour from an IP).
--
-- KEYS: 1 cooldown (written here only by a policy without a window; else read: it may
--       hold a lock, see verify.lua, or a cooldown begun under a plain policy),
--       2 window (a string: the sends in the policy's window, oldest first, 29 characters
--       each: the send's time in 13 digits of ms, then its nonce; then ';' and the
--       running cooldown, the window's own), 3 the IP's sends
--       (sorted set: one member per send, scored by its time; a key of the
--       number's slot when the IP is not capped in this call), 4 idempotency record (a key
--       of the number's slot when the request has no Idempotency-Key).
-- ARGV: 1 now, Redis's clock in ms as the gate's connection reckons it ('': the script
--       asks Redis's TIME), 2 fresh nonce (16 characters), then, when the IP is capped, the
--       IP's member (a nonce of its own, so the IP's set cannot be joined to the number's
--       keys), 3 idempotency fingerprint ('' : none); on a
--       cluster also 4 a wait decided outside this slot (the per-IP cap; '0': none) and
--       5 the idempotency record's key name to link ('' : none). On one Redis the record
--       to link is KEYS[4].
-- Returns the answer as one string, the idempotency record's format: "allowed reason wait
-- sends next now nonce observed", then, when the request has an Idempotency-Key, a space
-- and its fingerprint (reason '' for an allowed send; nonce: an allowed send's own, a
-- refusal's running cooldown's, or ''; observed: the observed rules that would have
-- refused, comma-separated). Or {record}: the text of an idempotency record already
-- stored under KEYS[4], which the gate replays when it holds this request's fingerprint
-- (and answers 422 when it does not: `ReserveAnswer`). With budgets or the pumping guard
-- (fraud-guard.lua): {their refusal...}, or {answer, 1} when the prefix is due in the
-- registry of blocked prefixes.
--
-- Observe mode: a rule the policy observes that would refuse does not; its reason goes
-- into the observed list and the other rules decide. Such a send starts a new cooldown (a
-- new nonce), counts in the window, and is not added to a full IP's set (the set stays
-- bounded by the cap). A lock always refuses (the gate refuses `locked` in observe mode).
--
-- A cooldown's value: the send's nonce, its deadline in 12 hex digits of ms (`CooldownValue`),
-- then, when an idempotency record answered the send, a space and the record's key name (a
-- refund voids it). A policy with a window keeps it in the window key, after the sends and
-- a ';' (no key of its own); else, and for a gate's first seconds (`cooldownInWindow` false,
-- until every plain-policy gate reads windows: `WindowCooldowns`), in the cooldown key.
--
-- Every rule is read and the answer decided before anything is written: a denied request
-- consumes nothing. The wait is the longest of every limit that binds the next send, the
-- reason the one that ends last. An allowed send's cooldown lasts its real wait (its ladder
-- step, or until the oldest send leaves the window when it filled `max sends`), so peek
-- and tokens show it; the answer's wait also covers the IP's cap when this send filled it.
--
-- The idempotency record (KEYS[4]) is the answer, a space and the fingerprint
-- (idempotency-put.lua writes the same on a cluster; `ReserveAnswer` reads it). It is
-- written first, `SET … NX GET`: a record already there is a replay (or another request's
-- key), and nothing else is written.
--
-- Cost (deploy/capacity.md says why each choice): a command, an argument, a reply field
-- or a write costs Redis more than the Lua around them. So the window is one string read
-- and written whole and holds the cooldown, read with the cooldown key in one MGET; a
-- cooldown's value holds its deadline (no PTTL) and the idempotency link; the record's
-- check is its write; a new number skips the window's parsing; the answer, the record and
-- the window are each made in one concatenation; numbers go to Redis as text.
-- The window keeps the last `max(max sends, ladder steps, 16)` sends, all any rule reads.

-- policy (ReserveScripts writes this block for each purpose)
local window, windowLifeText, maxSends, keepSends = 86400000, '86400000', 5, 16
local cooldownInWindow = true
local ipMax, ipWindow, ipKeep, ipKeepText = 100000, 3600000, 3600000, '4050000'
local lifetime, lifetimeText, longest, steps = 86400000, '86400000', 86400000, 3
local watchCooldown, watchMax, watchIP = false, false, false
local function step(i) return (select(i, '60000', '120000', '300000')) end
local firstHold, firstHoldMs, secondHold = '60000', 60000, '120000'
local guardRegister
-- end of policy

local nowText, now = clock(ARGV[1])
-- The observed rules that would have refused this send, comma-separated.
local observedText = ''
-- The cooldown key's value and the window, in one read.
local held = call('MGET', KEYS[1], KEYS[2])
local list = held[2]
-- The window's own cooldown: the value after the sends' ';' (see the head), or nil. A
-- policy without a window reads it too: one with a window may have written it (a purpose
-- whose policy changed, `WindowCooldowns`). A new number (most requests) has no window:
-- it skips the parsing.
local own
if list then
  local cut = string.find(list, ';', 1, true)
  if cut then own, list = string.sub(list, cut + 1), string.sub(list, 1, cut - 1) end
  if window == 0 then list = '' end
else
  list = ''
end
-- The sends still in the window, as the key holds them (`list`), most often oldest first:
-- at most the last `keepSends`, more than any rule reads (max sends, or the ladder's
-- steps), which bounds the key. Every send's time is read, since a clock that stepped
-- back (or a failover to a replica with a slower one) can leave an old send after a new
-- one; the list is split and joined again only when one of them left the window.
if list ~= '' then
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
local reason, wait = '', 0
-- A running cooldown refuses. A cooldown key refuses while it exists (Redis alone decides
-- that): its wait is the deadline its value holds after the nonce, when that is one the
-- gate could have set (ahead by at most the longest hold, give or take a second of another
-- gate's clock); else, or for a lock, the key's PTTL. The window's own cooldown refuses
-- until its deadline (at most the longest hold ahead). With both, the key's is the
-- cooldown (its nonce, its lock) and the wait the longer of the two.
local value, remaining, repair, locked = held[1], 0, false, false
if value then
  locked = string.sub(value, 1, 6) == 'locked'
  local deadline = not locked and cooldownDeadline(value)
  if deadline and deadline > now and deadline - now <= longest + 1000 then
    remaining = deadline - now
  else
    remaining = call('PTTL', KEYS[1])
    repair = remaining == -1
    if repair then remaining = step(math.max(1, math.min(sends, steps))) + 0 end
  end
end
if own then
  local deadline = cooldownDeadline(own)
  if deadline and deadline > now then
    local left = deadline - now
    if left > longest then left = longest end
    if left > remaining then remaining = left end
    value = value or own
  end
end
if value then
  if remaining < 1 then remaining = 1 end
  if locked or not watchCooldown then
    reason, wait = 'cooldown', remaining
  else
    observedText = 'cooldown'
  end
end
if maxSends > 0 and sends >= maxSends and watchMax then
  observedText = observedText == '' and 'max_sends' or observedText .. ',max_sends'
elseif maxSends > 0 and sends >= maxSends then
  -- The send that filled the window stretched its cooldown to this same moment
  -- (give or take Redis's millisecond rounding): then max_sends is what binds. The
  -- window lets the next send in when the send `max sends` back from the newest leaves.
  local i = sends - maxSends + 1
  local f = string.sub(list, i * 29 - 28, i * 29 - 16) + window - now
  if f + 2 >= wait then reason, wait = 'max_sends', math.max(f, wait) end
end
-- The IP's sends: stale ones (or older than this purpose's window) matter only at the cap:
-- then sends older than the longest IP window of any purpose (`ipKeep`) go, and this
-- purpose counts those within its own window.
local ipCount, ipFull = 0, false
if ipMax > 0 then
  ipCount = call('ZCARD', KEYS[3])
  if ipCount + 1 >= ipMax then
    call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ipKeep)
    ipCount = call('ZCOUNT', KEYS[3], '(' .. (now - ipWindow), '+inf')
    if ipCount >= ipMax then
      local first = call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
      local f = first[2] + ipWindow - now
      ipFull = true
      if watchIP then
        observedText = observedText == '' and 'ip_limit' or observedText .. ',ip_limit'
      elseif f > wait then
        reason, wait = 'ip_limit', f
      end
    end
  end
end
if ARGV[4] then
  local outside = ARGV[4] + 0
  if outside > wait then reason, wait = 'ip_limit', outside end
end
-- Budgets and the SMS-pumping guard (guard-check.lua, in a policy with either on one Redis;
-- else nothing) may refuse here, whatever the number's rules say.
-- include: guard-check
-- An allowed send's hold, as the text PX takes (`hold`, most often a ladder step as it
-- came) and in ms (`holdMs`).
local allowed, token, hold, holdMs, ipMember = reason == '', '', nil, 0, nil
if allowed then
  token = ARGV[2]
  -- The IP's member, when the gate gave one, follows the nonce: a nonce of its own.
  if #token > 16 then token, ipMember = string.sub(token, 1, 16), string.sub(token, 17, 32) end
  sends = sends + 1
  if sends == 1 then
    hold, holdMs = firstHold, firstHoldMs
  else
    hold = step(sends < steps and sends or steps)
    holdMs = hold + 0
  end
  if window > 0 and maxSends > 0 and sends >= maxSends and not watchMax then
    -- This send fills the window (it is not in `list` yet; with `max sends` 1, it is the one).
    local i = sends - maxSends + 1
    local f = i < sends and string.sub(list, i * 29 - 28, i * 29 - 16) + window - now or window
    if f > holdMs then hold, holdMs = string.format('%d', f), f end
  end
  wait = holdMs
  -- The send that fills the IP's cap: the next one from the IP waits for it too (unless
  -- the cap is only observed).
  if ipMax > 0 and ipCount + 1 >= ipMax and not watchIP then
    local f = ipWindow
    if ipCount > 0 then
      local first = call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
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
  token = cooldownNonce(value)
end
-- The answer as one string (one field of a reply costs Redis about as much as a small
-- command), the idempotency record's format. Numbers become text without Lua's own
-- conversion (a printf of a float, as costly as a command): the allowed wait is most
-- often the ladder step as it came.
-- Built in one concatenation (each makes a string Lua hashes and later collects).
local waitText = (allowed and wait == holdMs) and hold or string.format('%d', wait)
local sendsText, nextText
if sends == 1 then
  sendsText, nextText = '1', secondHold
else
  sendsText = sends < 10 and string.sub('0123456789', sends + 1, sends + 1) or string.format('%d', sends)
  nextText = step(sends < steps and sends + 1 or steps)
end
-- The record is the answer, then a space and the fingerprint (it may hold spaces).
local fingerprint = ARGV[3]
local answer = (allowed and '1 ' or '0 ') .. reason .. ' ' .. waitText .. ' ' .. sendsText .. ' '
  .. nextText .. ' ' .. nowText .. ' ' .. token .. ' ' .. observedText .. (fingerprint == '' and '' or ' ') .. fingerprint
if fingerprint ~= '' then
  -- A denial is kept for its wait, at most a minute (a retry after a lost answer comes
  -- within seconds): denials cost nothing else, so fresh keys on denied requests must not
  -- fill Redis.
  local keepFor = lifetimeText
  if not allowed then
    keepFor = (wait >= 1 and wait <= 60000 and wait <= lifetime) and waitText
      or string.format('%d', math.max(1, math.min(lifetime, wait, 60000)))
  end
  local record = call('SET', KEYS[4], answer, 'NX', 'PX', keepFor, 'GET')
  if record then return {record} end
end
if allowed then
  -- The cooldown (a plain cooldown's layout), and the link to the idempotency record:
  -- KEYS[4] on one Redis, ARGV[5] on a cluster.
  local link = fingerprint ~= '' and KEYS[4] or ARGV[5] or ''
  local cooldown = cooldownValue(token, now + holdMs) .. (link == '' and '' or ' ') .. link
  -- The window keeps the last `keepSends` sends: this one goes in, the oldest out when full.
  if #list >= keepSends * 29 then list = string.sub(list, 30) end
  if cooldownInWindow then
    -- In the window key, after the sends: one key, one write. A cooldown key that let
    -- this send through (an observed cooldown) would outlast it, so it goes.
    call('SET', KEYS[2], list .. nowText .. token .. ';' .. cooldown, 'PX', windowLifeText)
    if held[1] then call('DEL', KEYS[1]) end
  else
    if window > 0 then call('SET', KEYS[2], list .. nowText .. token, 'PX', windowLifeText) end
    call('SET', KEYS[1], cooldown, 'PX', hold)
  end
  -- An observed cap that is full counts nothing more: the set stays bounded by the cap.
  if ipMax > 0 and not ipFull then
    call('ZADD', KEYS[3], nowText, ipMember or token)
    -- The set outlives its newest send by the longest IP window, plus at most an eighth
    -- of it: its expiry is renewed only when less than that is left (never shortened).
    if call('PTTL', KEYS[3]) < ipKeep then call('PEXPIRE', KEYS[3], ipKeepText) end
  end
  -- include: guard-count
elseif repair then
  call('PEXPIRE', KEYS[1], string.format('%d', remaining))
end
if guardRegister then return {answer, 1} end
return answer
