-- KEYS: 1 cooldown, 2 failed checks (the code they count against), 3 trusted (the pumping
--       guard's mark), 4 window (the sends, then ';' and its own running cooldown:
--       reserve.lua).
-- ARGV: 1 'verified' or 'failed', 2 max failed checks (at least 1), 3 the policy's window
--       ms, 4 lockout ms, 5 trusted ms (0: the pumping guard is off, mark nothing),
--       6 the pumping guard's window ms, 7 now (Redis's clock, below), 8 the lockout's
--       scope: 'code' or 'number'.
-- The outcome of a code the back end checked. While the number is locked (its cooldown
-- key holds 'locked', scope 'number') nothing changes: {-1, ms the lock has left}.
--
-- Wrong checks count against the code the number was sent last: the newest send of its
-- window (a policy that counts sends) or its running cooldown's nonce (one that does
-- not), or, once both are gone, the code that already had wrong checks (KEY 2 holds its
-- nonce, a space and the count, or 'x' when the code is locked). A 'failed' for a number
-- with none of these was not preceded by a code the gate let through: {-2, 0}, nothing
-- counted, so wrong codes typed for a number nobody asked a code for lock nothing. A new
-- send is a new code: its count starts at 0.
--
-- 'verified' clears the wrong checks and, with the pumping guard on, marks the number
-- trusted for ARGV[5] ms (trust-mark.lua): {1, 1} when the verification is to count
-- toward its prefix's conversion, {1, 0} when not. 'failed' counts one: {0, attempts
-- left}; at the limit, scope 'code' locks the code: {-3, ms until the number's running
-- cooldown ends}, the same answer to any later check of that code, 'verified' included;
-- scope 'number' locks the number for the lockout (or for its running cooldown, the
-- key's or the window's, if that is longer: a lock never shortens a wait): {-1, lock ms}.
-- The lock replaces the cooldown key, so a send meets it in the same single command as a
-- cooldown.
-- Redis's clock: ARGV[7] (prelude.lua's `clock`).
local _, now = clock(ARGV[7])
local value = call('GET', KEYS[1])
if value and string.sub(value, 1, 6) == 'locked' then return {-1, call('PTTL', KEYS[1])} end
local window = tonumber(ARGV[3])
-- The number's last code (its window's newest send), and how long its running cooldown
-- has left (the window's own: window-split.lua).
local code, left = nil, 0
local list = call('GET', KEYS[4])
if list then
  -- include: window-split
  local whole = sendsEnd - sendsEnd % 29
  if whole >= 29 and tonumber(string.sub(list, whole - 28, whole - 16)) + window > now then
    code = string.sub(list, whole - 15, whole)
  end
  local deadline = own and cooldownDeadline(own)
  if deadline and deadline > now then left = deadline - now end
end
if value then
  code = code or cooldownNonce(value)
  local pttl = call('PTTL', KEYS[1])
  if pttl > left then left = pttl end
end
local record = call('GET', KEYS[2])
local recordCode, count = nil, 0
if record and string.sub(record, 17, 17) == ' ' then
  recordCode, count = string.sub(record, 1, 16), string.sub(record, 18)
end
code = code or recordCode
if code ~= recordCode then count = 0 end
if count == 'x' then return {-3, left} end
if ARGV[1] == 'verified' then
  if record then call('DEL', KEYS[2]) end
  local trustedKey, trustedFor, guardWindow = KEYS[3], ARGV[5], ARGV[6]
  -- include: trust-mark
end
if not code then return {-2, 0} end
local failed = count + 1
local limit = tonumber(ARGV[2])
if failed < limit then
  call('SET', KEYS[2], code .. ' ' .. failed, 'PX', ARGV[3])
  return {0, limit - failed}
end
if ARGV[8] == 'code' then
  call('SET', KEYS[2], code .. ' x', 'PX', ARGV[3])
  return {-3, left}
end
local hold = tonumber(ARGV[4])
if left > hold then hold = left end
call('SET', KEYS[1], 'locked', 'PX', tostring(hold))
call('DEL', KEYS[2])
return {-1, hold}
