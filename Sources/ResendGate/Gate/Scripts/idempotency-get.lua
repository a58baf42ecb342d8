-- KEYS: idempotency record. ARGV: fingerprint. Returns the stored answer as {allowed,
-- reason, wait, sends, next, now, nonce, replayed 1, observed}, {-1} for another request,
-- or {} when none.
-- The record is one string, as reserve.lua writes it: "allowed reason wait sends next
-- now nonce observed fingerprint", the fingerprint last (an older version's record,
-- without `observed`, is read too).
local record = redis.call('GET', KEYS[1])
if not record then return {} end
local a, r, ms, s, n, at, tok, obs, fp = string.match(record, '^(%-?%d+) (%S*) (%-?%d+) (%-?%d+) (%-?%d+) (%-?%d+) (%S*) (%S*) (.*)$')
if fp ~= ARGV[1] then
  a, r, ms, s, n, at, tok, fp = string.match(record, '^(%-?%d+) (%S*) (%-?%d+) (%-?%d+) (%-?%d+) (%-?%d+) (%S*) (.*)$')
  obs = ''
  if fp ~= ARGV[1] then return {-1} end
end
return {tonumber(a), r, tonumber(ms), tonumber(s), tonumber(n), tonumber(at), tok, 1, obs}
