-- KEYS: 1 cooldown, 2 failed checks (a counter), 3 trusted (the pumping guard's mark),
--       4 window (its own running cooldown, after the sends' ';': reserve.lua).
-- ARGV: 1 'verified' or 'failed', 2 max failed checks (at least 1), 3 window ms,
--       4 lockout ms, 5 trusted ms (0: the pumping guard is off, mark nothing),
--       6 the pumping guard's window ms, 7 now (Redis's clock, below).
-- The outcome of a code the back end checked. While the number is locked (its cooldown
-- key holds 'locked') nothing changes: {-1, ms the lock has left}. 'verified' clears the
-- wrong codes and, with the pumping guard on, marks the number trusted for ARGV[5] ms
-- (the guard never refuses it then): {1, 1} when the verification is to count toward
-- its prefix's conversion, {1, 0} when not. A number counts at most once per guard
-- window (the mark holds the time it last counted): one real number reported verified
-- again and again cannot lift a pumped range's conversion. 'failed' counts one in the window: {0,
-- attempts left}, or, at the limit, locks the number for the lockout (or for its running
-- cooldown, the key's or the window's, if that is longer: a lock never shortens a wait)
-- and clears the count:
-- {-1, lock ms}. The lock replaces the cooldown key, so a send meets it in the same
-- single command as a cooldown.
-- Redis's clock in ms: as the gate's connection reckons it (ARGV[7]), or, while it has
-- no reckoning ('' or none), Redis's TIME (a command, as dear as the rest of this call).
local now = tonumber(ARGV[7] or '')
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local value = redis.call('GET', KEYS[1])
if value and string.sub(value, 1, 6) == 'locked' then return {-1, redis.call('PTTL', KEYS[1])} end
if ARGV[1] == 'verified' then
  redis.call('DEL', KEYS[2])
  if ARGV[5] == '0' then return {1, 0} end
  local counted = tonumber(redis.call('GET', KEYS[3]) or '')
  if counted and now - counted < tonumber(ARGV[6]) then
    redis.call('PEXPIRE', KEYS[3], ARGV[5])
    return {1, 0}
  end
  redis.call('SET', KEYS[3], tostring(now), 'PX', ARGV[5])
  return {1, 1}
end
local failed = redis.call('INCR', KEYS[2])
if failed == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
local limit = tonumber(ARGV[2])
if failed < limit then return {0, limit - failed} end
local hold = tonumber(ARGV[4])
local left = redis.call('PTTL', KEYS[1])
if left > hold then hold = left end
local window = redis.call('GET', KEYS[4])
local cut = window and string.find(window, ';', 1, true)
if cut then
  local deadline = tonumber(string.sub(window, cut + 17, cut + 28), 16)
  if deadline and deadline - now > hold then hold = deadline - now end
end
redis.call('SET', KEYS[1], 'locked', 'PX', tostring(hold))
redis.call('DEL', KEYS[2])
return {-1, hold}
