-- reads: bucket, key, now, pBlocked, pDead, pRegistered, pRegisteredField, pSinceField
-- sets: pRegister, pSince
-- A part, included as text (`-- include: prefix-keep`) after prefix-read.lua: the upkeep
-- of a judged prefix `key` at `now`: dead buckets out, the blocked mark set or cleared,
-- and the registry's mark renewed once a `bucket` (ms) while blocked. Sets `pRegister`
-- (the includer declares it) to true when the caller should put the prefix in the
-- registry of blocked prefixes.
pRegister = false
if pDead then call('HDEL', key, unpack(pDead)) end
if not pBlocked then
  if pSinceField then call('HDEL', key, pSinceField) end
else
  if pSinceField == nil then
    pSince = now
    call('HSET', key, 'b:' .. string.format('%d', now), '1')
  end
  if pRegistered == nil or pRegistered + bucket <= now then
    if pRegisteredField then call('HDEL', key, pRegisteredField) end
    call('HSET', key, 'r:' .. string.format('%d', now), '1')
    pRegister = true
  end
end
