-- reads: codeKeys, firstBudgetKey, guardObserved, now, observedText, pumpBucket, pumpMinSends
-- reads: pumpObserved, pumpOn, pumpPPM, pumpWindow, shares
-- sets: guardObserved, guardRegister, observedText, share1, share1Window, share2, share2Window
-- sets: share3, share3Window, shares
-- A part of the reserve script of a policy with budgets or the SMS-pumping guard on one
-- Redis (fraud-guard.lua), put in where reserve.lua says `-- include: guard-check`: after the
-- number's rules are read, before anything is written. Text, not a function: Redis makes
-- every function of a script anew on each call.
-- Budgets and the guard refuse whatever the number's rules say, answering {which (the
-- budget's place among KEYS' budgets, 1-based, or 0 for the guard), wait, now, observed,
-- register}, unless the request is a replay (then its record, as the number's rules would
-- answer it). What they observe joins the number's observed rules; the shares an allowed
-- send takes are noted for guard-count.lua.
-- (A purpose that issues codes passes its code key after the budgets: `codeKeys`.)
for i = firstBudgetKey, #KEYS - codeKeys do
  -- A budget's shard is named '<prefix>:budget:{<scope>:<kind>:<shard>}' (GateKeys): its
  -- kind follows the first colon after the brace (a scope holds none).
  local first = KEYS[i]
  local kind = string.sub(first, string.find(first, ':', string.find(first, '{', 1, true) + 2, true) + 1, -4)
  -- include: budget-policy
  local room, roomWait
  -- include: budget-room
  if room then
    local place = i - firstBudgetKey + 1
    if place == 1 then
      share1, share1Window = room, window
    elseif place == 2 then
      share2, share2Window = room, window
    elseif place == 3 then
      share3, share3Window = room, window
    else
      -- A fourth limit and more (limits written as data): a table, only then.
      shares = shares or {}
      local n = #shares
      shares[n + 1] = room
      shares[n + 2] = window
    end
  elseif observed then
    guardObserved = guardObserved == '' and reason or guardObserved .. ',' .. reason
  else
    local record = ARGV[3] ~= '' and call('GET', KEYS[4])
    if record then return {record} end
    return {i - firstBudgetKey + 1, roomWait, now, guardObserved, 0}
  end
end
if pumpOn then
  local key, window, bucket, minSends, ppm = KEYS[6], pumpWindow, pumpBucket, pumpMinSends, pumpPPM
  local pBlocked, pSends, pVerified, pSince, pWait, pSinceField, pRegistered, pRegisteredField, pDead, pRegister
  -- include: prefix-read
  -- include: prefix-keep
  guardRegister = pRegister
  -- A trusted number (it verified a code lately) is not refused by its prefix.
  if pBlocked and call('EXISTS', KEYS[5]) == 0 then
    if pumpObserved then
      guardObserved = guardObserved == '' and 'suspected_pumping' or guardObserved .. ',suspected_pumping'
    else
      local record = ARGV[3] ~= '' and call('GET', KEYS[4])
      if record then return {record} end
      return {0, math.max(1, pWait), now, guardObserved, guardRegister and 1 or 0}
    end
  end
end
if guardObserved ~= '' then
  observedText = observedText == '' and guardObserved or observedText .. ',' .. guardObserved
end
