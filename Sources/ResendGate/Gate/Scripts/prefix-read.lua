-- reads: key, minSends, now, ppm, window
-- sets: pBlocked, pDead, pRegistered, pRegisteredField, pSends, pSince, pSinceField, pVerified
-- sets: pWait
-- A part, included as text (`-- include: prefix-read`) where a destination prefix is judged
-- for the SMS-pumping guard: fraud-guard.lua's check and pumping.lua. Text, not a function:
-- Redis makes every function of a script anew on each call.
-- The prefix's hash holds one field per bucket of the window and kind, named by the
-- bucket's start on Redis's clock: 's:<ms>' allowed sends, 'v:<ms>' verified outcomes; a
-- bucket counts until its start is a window old (so the window is exact to within one
-- bucket). 'b:<ms>' marks when the prefix was found blocked, 'r:<ms>' when it was last put
-- in the registry of blocked prefixes. Blocked: at least `minSends` sends in the window
-- and verified * 1e6 < ppm * sends.
-- Numbers go to Redis as text, and text becomes a number with '+ 0' (Lua's tonumber
-- parses twice; a Lua number as a command's argument costs a printf).
--
-- Reads the hash `key` at `now` (ms) for a guard of `window` ms, `minSends` and `ppm`;
-- writes nothing. Sets (the includer declares them as locals): `pBlocked`, `pSends`,
-- `pVerified`; `pWait`, the ms until it is no longer blocked, assuming nothing new arrives
-- (when enough buckets age out that the rest is under `minSends` or converts well enough;
-- 0 when it is not blocked); `pSince`, when it was found blocked (0: not blocked);
-- `pSinceField`, `pRegistered`, `pRegisteredField` (the marks' fields and the registry
-- mark's time, nil when absent) and `pDead`, the fields of buckets past the window (nil
-- when none), for prefix-keep.lua.
pSends, pVerified, pSince, pWait, pSinceField, pRegistered, pRegisteredField, pDead = 0, 0, 0, 0, nil, nil, nil, nil
do
  local fields = call('HGETALL', key)
  -- One pass sums the window's counts (a field is a kind's letter, a colon, then a time in
  -- ms); the buckets' own sums are needed, and made, only for a blocked prefix's wait.
  for i = 1, #fields, 2 do
    local field = fields[i]
    local kind = string.sub(field, 1, 1)
    if kind == 's' or kind == 'v' then
      if string.sub(field, 3) + window <= now then
        pDead = pDead or {}
        pDead[#pDead + 1] = field
      elseif kind == 's' then
        pSends = pSends + fields[i + 1]
      else
        pVerified = pVerified + fields[i + 1]
      end
    elseif kind == 'b' then
      pSince, pSinceField = string.sub(field, 3) + 0, field
    elseif kind == 'r' then
      pRegistered, pRegisteredField = string.sub(field, 3) + 0, field
    end
  end
  pBlocked = pSends >= minSends and pVerified * 1000000 < ppm * pSends
  if not pBlocked then
    pSince = 0
  else
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
    local s, v = pSends, pVerified
    for _, at in ipairs(starts) do
      s, v = s - sendsAt[at], v - verifiedAt[at]
      if s < minSends or v * 1000000 >= ppm * s then
        pWait = at + window - now
        break
      end
    end
  end
end
