-- KEYS: 1 the registry of purposes whose cooldowns gates keep in window keys (a hash:
--       purpose → Redis's ms until which such a cooldown may still run).
-- ARGV: purpose, ms, purpose, ms, …: the purposes this gate keeps cooldowns in window keys
--       for (reserve.lua), each with how long from now one it starts may run (its policy's
--       longest hold, and a margin for the gate's next announcement); none for a gate that
--       keeps none there.
-- Announces them (a purpose's time is only ever pushed later), forgets the purposes whose
-- time passed, and returns {Redis's ms now, purpose, ms, purpose, ms, …} for those left:
-- until then, a gate whose policy for the purpose is a plain cooldown decides with the
-- reserve script, which reads the window's cooldown, not with `SET NX`, which does not.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #ARGV - 1, 2 do
  local ends = now + tonumber(ARGV[i + 1])
  if ends > tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') then
    redis.call('HSET', KEYS[1], ARGV[i], string.format('%d', ends))
  end
end
local all, reply = redis.call('HGETALL', KEYS[1]), {now}
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    reply[#reply + 1] = all[i]
    reply[#reply + 1] = all[i + 1]
  end
end
return reply
