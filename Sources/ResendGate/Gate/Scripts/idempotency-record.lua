-- reads: allowed, answer, fingerprint, lifetime, lifetimeText, wait, waitText
-- sets: (none)
-- The idempotency rule's part of the reserve script (reserve.lua): with a fingerprint
-- (ARGV[3], the request had an Idempotency-Key), the answer is stored under KEYS[4]
-- before anything else is written; a record already there is a replay (or another
-- request's key) and is answered instead, writing nothing.
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
