-- KEYS: 1 a destination prefix's counts for one purpose (a hash).
-- ARGV: 1 mode, 2 window ms, 3 bucket ms, 4 min sends, 5 min conversion in parts per
--       million, 6 (mode 'give') the field a 'take' counted in, 7 now: Redis's clock in ms
--       as the gate's connection reckons it ('' or none: the script asks TIME).
-- The SMS-pumping guard of one prefix (GateWorker+Pumping.swift). The hash holds one
-- field per bucket of the window and kind, named by the bucket's start on Redis's clock:
-- 's:<ms>' allowed sends, 'v:<ms>' verified outcomes; a bucket counts until its start
-- is a window old (so the window is exact to within one bucket). 'b:<ms>' marks when
-- the prefix was found blocked, 'r:<ms>' when it was last put in the registry of
-- blocked prefixes. Blocked: at least 'min sends' sends in the window and
-- verified * 1e6 < ppm * sends.
-- Modes:
--   take     judge the prefix; when it is not blocked, count this send.
--   force    count this send whatever the prefix's state (a trusted number's send).
--   read     judge the prefix; write nothing (the blocked-prefix listing).
--   give     take back the send a 'take' counted in field ARGV[6] (the number refused it).
--   verified count a verified outcome.
-- Reply: {blocked 0|1, sends, verified, ms until it is no longer blocked (0 when it
-- is not), ms since 1970 when it was found blocked (0), Redis's now in ms, 1 when the
-- caller should put it in the registry, the field this send was counted in ('')}.
-- The wait assumes nothing new arrives: it is when enough of the window's buckets age
-- out that the rest is under 'min sends' or converts well enough.
-- Numbers go to Redis as text, and text becomes a number with '+ 0' (Lua's tonumber parses
-- twice; a Lua number as a command's argument costs a printf).
local now = ARGV[7]
if now and now ~= '' then
  now = now + 0
else
  local t = redis.call('TIME')
  now = t[1] * 1000 + math.floor(t[2] / 1000)
end
local key, mode = KEYS[1], ARGV[1]
local window, bucket = ARGV[2] + 0, ARGV[3] + 0
local start = string.format('%d', now - now % bucket)
local lifetime = string.format('%d', window + bucket)
if mode == 'give' then
  if redis.call('HEXISTS', key, ARGV[6]) == 1 then redis.call('HINCRBY', key, ARGV[6], '-1') end
  return {0, 0, 0, 0, 0, now, 0, ''}
end
-- The key outlives its newest bucket by the window: its expiry is set when a bucket
-- starts (its first count), which saves a write on every other count.
if mode == 'verified' then
  if redis.call('HINCRBY', key, 'v:' .. start, '1') == 1 then redis.call('PEXPIRE', key, lifetime) end
  return {0, 0, 0, 0, 0, now, 0, ''}
end
local minSends, ppm = ARGV[4] + 0, ARGV[5] + 0
local function blocks(s, v) return s >= minSends and v * 1000000 < ppm * s end
local fields = redis.call('HGETALL', key)
local starts, sendsAt, verifiedAt, dead = {}, {}, {}, {}
local sends, verified, since, since_field, registered_field, registered = 0, 0, 0, nil, nil, nil
for i = 1, #fields, 2 do
  -- A field is a kind's letter, a colon, then a time in ms.
  local kind, at = string.sub(fields[i], 1, 1), string.sub(fields[i], 3) + 0
  if kind == 's' or kind == 'v' then
    if at + window <= now then
      dead[#dead + 1] = fields[i]
    else
      local n = fields[i + 1] + 0
      if sendsAt[at] == nil then
        sendsAt[at], verifiedAt[at] = 0, 0
        starts[#starts + 1] = at
      end
      if kind == 's' then
        sendsAt[at] = sendsAt[at] + n
        sends = sends + n
      else
        verifiedAt[at] = verifiedAt[at] + n
        verified = verified + n
      end
    end
  elseif kind == 'b' then
    since, since_field = at, fields[i]
  elseif kind == 'r' then
    registered, registered_field = at, fields[i]
  end
end
local blocked = blocks(sends, verified)
local wait = 0
if blocked then
  table.sort(starts)
  local s, v = sends, verified
  for _, at in ipairs(starts) do
    s, v = s - sendsAt[at], v - verifiedAt[at]
    if not blocks(s, v) then
      wait = at + window - now
      break
    end
  end
end
if mode == 'read' then
  return {blocked and 1 or 0, sends, verified, wait, blocked and since or 0, now, 0, ''}
end
if #dead > 0 then redis.call('HDEL', key, unpack(dead)) end
local register, counted = 0, ''
if blocked then
  if since_field == nil then
    since = now
    redis.call('HSET', key, 'b:' .. string.format('%d', now), '1')
  end
  if registered == nil or registered + bucket <= now then
    if registered_field then redis.call('HDEL', key, registered_field) end
    redis.call('HSET', key, 'r:' .. string.format('%d', now), '1')
    register = 1
  end
elseif since_field then
  redis.call('HDEL', key, since_field)
  since = 0
end
if mode == 'force' or not blocked then
  counted = 's:' .. start
  if redis.call('HINCRBY', key, counted, '1') == 1 then redis.call('PEXPIRE', key, lifetime) end
end
return {blocked and 1 or 0, sends, verified, wait, blocked and since or 0, now, register, counted}
