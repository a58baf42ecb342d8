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
local _, now = clock()
for i = 1, #ARGV - 1, 2 do
  local ends = now + tonumber(ARGV[i + 1])
  if ends > tonumber(call('HGET', KEYS[1], ARGV[i]) or '0') then
    call('HSET', KEYS[1], ARGV[i], string.format('%d', ends))
  end
end
local all, reply = call('HGETALL', KEYS[1]), {now}
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= now then
    call('HDEL', KEYS[1], all[i])
  else
    reply[#reply + 1] = all[i]
    reply[#reply + 1] = all[i + 1]
  end
end
return reply
