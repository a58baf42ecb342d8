-- A part (after prelude.lua) of the scripts that judge a destination prefix for the
-- SMS-pumping guard: pumping.lua, and the reserve script of a policy with the guard on
-- one Redis (fraud-guard.lua). The prefix's hash holds one field per bucket of the window
-- and kind, named by the bucket's start on Redis's clock: 's:<ms>' allowed sends,
-- 'v:<ms>' verified outcomes; a bucket counts until its start is a window old (so the
-- window is exact to within one bucket). 'b:<ms>' marks when the prefix was found
-- blocked, 'r:<ms>' when it was last put in the registry of blocked prefixes. Blocked: at
-- least `minSends` sends in the window and verified * 1e6 < ppm * sends.
-- Numbers go to Redis as text, and text becomes a number with '+ 0' (Lua's tonumber
-- parses twice; a Lua number as a command's argument costs a printf).

-- The prefix's figures now: {blocked, sends, verified, wait (ms until it is no longer
-- blocked, assuming nothing new arrives: when enough buckets age out that the rest is
-- under `minSends` or converts well enough; 0 when it is not blocked), since (when it was
-- found blocked, 0: never), and what `keepPrefix` needs}. Writes nothing.
local function readPrefix(key, now, window, minSends, ppm)
  local fields = call('HGETALL', key)
  local p = {sends = 0, verified = 0, since = 0, wait = 0}
  -- One pass sums the window's counts (a field is a kind's letter, a colon, then a time in
  -- ms); the buckets' own sums are needed, and made, only for a blocked prefix's wait.
  for i = 1, #fields, 2 do
    local field = fields[i]
    local kind = string.sub(field, 1, 1)
    if kind == 's' or kind == 'v' then
      if string.sub(field, 3) + window <= now then
        p.dead = p.dead or {}
        p.dead[#p.dead + 1] = field
      elseif kind == 's' then
        p.sends = p.sends + fields[i + 1]
      else
        p.verified = p.verified + fields[i + 1]
      end
    elseif kind == 'b' then
      p.since, p.sinceField = string.sub(field, 3) + 0, field
    elseif kind == 'r' then
      p.registered, p.registeredField = string.sub(field, 3) + 0, field
    end
  end
  p.blocked = p.sends >= minSends and p.verified * 1000000 < ppm * p.sends
  if not p.blocked then
    p.since = 0
    return p
  end
  local starts, sendsAt, verifiedAt = {}, {}, {}
  for i = 1, #fields, 2 do
    local kind, at = string.sub(fields[i], 1, 1), string.sub(fields[i], 3) + 0
    if (kind == 's' or kind == 'v') and at + window > now then
      if sendsAt[at] == nil then
        sendsAt[at], verifiedAt[at] = 0, 0
        starts[#starts + 1] = at
      end
      local n = fields[i + 1] + 0
      if kind == 's' then sendsAt[at] = sendsAt[at] + n else verifiedAt[at] = verifiedAt[at] + n end
    end
  end
  table.sort(starts)
  local s, v = p.sends, p.verified
  for _, at in ipairs(starts) do
    s, v = s - sendsAt[at], v - verifiedAt[at]
    if s < minSends or v * 1000000 >= ppm * s then
      p.wait = at + window - now
      break
    end
  end
  return p
end

-- The upkeep of a judged prefix: dead buckets out, the blocked mark set or cleared, and
-- the registry's mark renewed once a bucket while blocked. True when the caller should
-- put the prefix in the registry of blocked prefixes.
local function keepPrefix(key, p, now, bucket)
  if p.dead then call('HDEL', key, unpack(p.dead)) end
  if not p.blocked then
    if p.sinceField then call('HDEL', key, p.sinceField) end
    return false
  end
  if p.sinceField == nil then
    p.since = now
    call('HSET', key, 'b:' .. string.format('%d', now), '1')
  end
  if p.registered ~= nil and p.registered + bucket > now then return false end
  if p.registeredField then call('HDEL', key, p.registeredField) end
  call('HSET', key, 'r:' .. string.format('%d', now), '1')
  return true
end

-- Counts one allowed send (or, with kind 'v', a verified outcome) in the current bucket;
-- the key outlives its newest bucket by the window: its expiry is set when a bucket
-- starts (its first count), which saves a write on every other count. Returns the field.
local function countInPrefix(key, kind, now, window, bucket)
  local field = kind .. string.format('%d', now - now % bucket)
  if call('HINCRBY', key, field, '1') == 1 then call('PEXPIRE', key, string.format('%d', window + bucket)) end
  return field
end
