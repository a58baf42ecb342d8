-- KEYS: idempotency record. ARGV: fingerprint. Returns the stored answer like
-- `reserve` does ({..., replayed 1}), {-1} for another request, or {} when none.
local v = redis.call('HMGET', KEYS[1], 'fp', 'a', 'r', 'ms', 's', 'n', 't', 'tok')
if not v[1] then return {} end
if v[1] ~= ARGV[1] then return {-1} end
return {tonumber(v[2]), v[3], tonumber(v[4]), tonumber(v[5]), tonumber(v[6]), tonumber(v[7]), v[8], 1}
