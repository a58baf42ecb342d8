-- reads: now, nowText, pumpBucket, pumpOn, pumpWindow, share1, share1Window, share2, share2Window
-- reads: share3, share3Window, shares
-- sets: (none)
-- A part of the reserve script of a policy with budgets or the SMS-pumping guard on one
-- Redis (fraud-guard.lua), put in where reserve.lua says `-- include: guard-count`: an
-- allowed send takes a share of each budget with room (guard-check.lua noted them), under
-- a member of its own (the end of ARGV[2]), and counts in its prefix.
do
  local member = string.sub(ARGV[2], -16)
  local room, window
  if share1 then
    room, window = share1, share1Window
    -- include: budget-count
  end
  if share2 then
    room, window = share2, share2Window
    -- include: budget-count
  end
  if share3 then
    room, window = share3, share3Window
    -- include: budget-count
  end
  if shares then
    for j = 1, #shares, 2 do
      room, window = shares[j], shares[j + 1]
      -- include: budget-count
    end
  end
  if pumpOn then
    local key, window, bucket, countKind, counted = KEYS[6], pumpWindow, pumpBucket, 's:', nil
    -- include: prefix-count
  end
end
