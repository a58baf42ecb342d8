-- reads: allowed, answer, fingerprint, lifetime, lifetimeText, wait, waitText
-- sets: (none)
-- The idempotency rule's part of the reserve script (reserve.lua): with a fingerprint
-- (ARGV[3], the request had an Idempotency-Key), the answer is stored under KEYS[4]
-- before anything else is written; a record already there is a replay (or another
-- request's key) and is answered instead, writing nothing.
if fingerprint ~= '' then
  -- include: idempotency-keep
  local record = call('SET', KEYS[4], answer, 'NX', 'PX', keepFor, 'GET')
  if record then return {record} end
end
