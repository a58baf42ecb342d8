-- parts: budget-shards prefix-counts
-- The reserve script's part for send budgets and the SMS-pumping guard on one Redis or
-- Sentinel (ReserveScripts puts it, after the parts its first line names, right after the
-- policy block, for a policy with either): every rule of a send in one call,
-- atomically, so nothing is held while another step decides and nothing is given back.
-- On a Redis Cluster a budget's shards and a prefix live in slots of their own: there
-- they are steps of their own (budget-take.lua, pumping.lua; GateWorker+Budgets.swift).
-- KEYS, after reserve.lua's four: with the guard on, 5 the number's `trusted` mark and
-- 6 the prefix's counts; then, from KEYS[firstBudgetKey], for each budget the send must
-- fit in, the shard the send tries first (its other shards' names are that one's with
-- another number: keys a script reaches without naming them, which one Redis allows).
-- ARGV[2] ends with the member the budgets count the send under (a nonce of its own).
-- The block says, for each budget's kind (a region, a calling code, `total`): {limit,
-- shards, window ms, observed, reason}; and the guard's figures.
local guardObserved, guardRegister, guardShares = '', false, {}

local function noteGuard(reason)
  guardObserved = guardObserved == '' and reason or guardObserved .. ',' .. reason
end

-- nil when the budgets and the guard let the send on (the shares it will take noted), or
-- the refusal: {the budget's place among KEYS' budgets (1-based), or 0 for the guard, its wait}.
local function checkGuard(now)
  for i = firstBudgetKey, #KEYS do
    local first = KEYS[i]
    local base, start = string.match(first, '^(.*:)(%d+)}$')
    local budget = budgets[string.match(base, ':([^:]*):$')]
    local limit, shards = budget[1], budget[2]
    start = start + 0
    local place, wait = shardWithRoom(shards,
      function(n) return n == 1 and first or base .. ((start + n - 1) % shards) .. '}' end,
      function(n) return math.floor(limit / shards) + ((start + n - 1) % shards < limit % shards and 1 or 0) end,
      budget[3], now)
    if place > 0 then
      guardShares[#guardShares + 1] = {place == 1 and first or base .. ((start + place - 1) % shards) .. '}', budget[3]}
    elseif budget[4] then
      noteGuard(budget[5])
    else
      return {i - firstBudgetKey + 1, wait}
    end
  end
  if pumpOn then
    local p = readPrefix(KEYS[6], now, pumpWindow, pumpMinSends, pumpPPM)
    guardRegister = keepPrefix(KEYS[6], p, now, pumpBucket)
    if p.blocked and call('EXISTS', KEYS[5]) == 0 then
      if not pumpObserved then return {0, math.max(1, p.wait)} end
      noteGuard('suspected_pumping')
    end
  end
  return nil
end

-- An allowed send: a share of each budget with room, and one send in the prefix.
local function countGuarded(nowText, now)
  local member = string.sub(ARGV[2], -16)
  for _, share in ipairs(guardShares) do takeShare(share[1], member, nowText, share[2]) end
  if pumpOn then countInPrefix(KEYS[6], 's:', now, pumpWindow, pumpBucket) end
end
