-- KEYS: 1 a destination prefix's counts for one purpose (a hash: prefix-read.lua).
-- ARGV: 1 mode, 2 window ms, 3 bucket ms, 4 min sends, 5 min conversion in parts per
--       million, 6 (mode 'give') the field a 'take' counted in, 7 now: Redis's clock in ms
--       as the gate's connection reckons it ('' or none: the script asks TIME).
-- The SMS-pumping guard of one prefix in a step of its own: on a Redis Cluster, where the
-- prefix has a slot of its own (PrefixGuard.swift), for the listing of blocked
-- prefixes, and for verified outcomes. On one Redis a send's guard is part of its reserve
-- script (fraud-guard.lua). Modes:
--   take     judge the prefix; when it is not blocked, count this send.
--   force    count this send whatever the prefix's state (a trusted number's send).
--   read     judge the prefix; write nothing (the blocked-prefix listing).
--   give     take back the send a 'take' counted in field ARGV[6] (the number refused it).
--   verified count a verified outcome.
-- Reply: {blocked 0|1, sends, verified, ms until it is no longer blocked (0 when it
-- is not), ms since 1970 when it was found blocked (0), Redis's now in ms, 1 when the
-- caller should put it in the registry, the field this send was counted in ('')}.
local _, now = clock(ARGV[7])
local key, mode = KEYS[1], ARGV[1]
local window, bucket = ARGV[2] + 0, ARGV[3] + 0
if mode == 'give' then
  if call('HEXISTS', key, ARGV[6]) == 1 then call('HINCRBY', key, ARGV[6], '-1') end
  return {0, 0, 0, 0, 0, now, 0, ''}
end
local countKind, counted = 'v:', ''
if mode == 'verified' then
  -- include: prefix-count
  return {0, 0, 0, 0, 0, now, 0, ''}
end
local minSends, ppm = ARGV[4] + 0, ARGV[5] + 0
local pBlocked, pSends, pVerified, pSince, pWait, pSinceField, pRegistered, pRegisteredField, pDead, pRegister
-- include: prefix-read
local blocked = pBlocked and 1 or 0
if mode == 'read' then return {blocked, pSends, pVerified, pWait, pSince, now, 0, ''} end
-- include: prefix-keep
countKind = 's:'
if mode == 'force' or not pBlocked then
  -- include: prefix-count
end
return {blocked, pSends, pVerified, pWait, pSince, now, pRegister and 1 or 0, counted}
