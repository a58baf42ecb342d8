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
-- shards, window ms, observed, reason}; and the guard's figures. As written here it is
-- the policy `deploy/bench --only cost` adds to every rule (a budget for CN and a total
-- one, 10 000 000 a day in 8 shards each; the guard over an hour in ten buckets, 10 000 000
-- sends before it judges, 10 % conversion), which `deploy/script-cost --script
-- reserve-guarded` measures.
-- guard policy (ReserveScripts writes this block for each purpose with either)
local budgets, firstBudgetKey = {['CN'] = {10000000, 8, 86400000, false, 'country_limit'}, ['total'] = {10000000, 8, 86400000, false, 'global_limit'}}, 7
local pumpOn, pumpObserved = true, false
local pumpWindow, pumpBucket = 3600000, 360000
local pumpMinSends, pumpPPM = 10000000, 100000
-- end of guard policy
local guardObserved, guardRegister, guardShares = '', false, {}

-- nil when the budgets and the guard let the send on (the shares it will take noted in
-- guardShares: a shard's name, then its window), or the refusal: {the budget's place among
-- KEYS' budgets (1-based), or 0 for the guard, its wait}. What an observed rule would have
-- refused is noted in guardObserved.
local function checkGuard(now)
  for i = firstBudgetKey, #KEYS do
    local first = KEYS[i]
    local base, kind, start = string.match(first, '^(.*:([^:]*):)(%d+)}$')
    local budget = budgets[kind]
    local shard, wait = shardWithRoom(first, base, start + 0, budget[2], budget[1], budget[3], now)
    if shard then
      guardShares[#guardShares + 1], guardShares[#guardShares + 2] = shard, budget[3]
    elseif budget[4] then
      guardObserved = guardObserved == '' and budget[5] or guardObserved .. ',' .. budget[5]
    else
      return {i - firstBudgetKey + 1, wait}
    end
  end
  if pumpOn then
    local p = readPrefix(KEYS[6], now, pumpWindow, pumpMinSends, pumpPPM)
    guardRegister = keepPrefix(KEYS[6], p, now, pumpBucket)
    if p.blocked and call('EXISTS', KEYS[5]) == 0 then
      if not pumpObserved then return {0, math.max(1, p.wait)} end
      guardObserved = guardObserved == '' and 'suspected_pumping' or guardObserved .. ',suspected_pumping'
    end
  end
  return nil
end

-- An allowed send: a share of each budget with room, and one send in the prefix.
local function countGuarded(nowText, now)
  local member = string.sub(ARGV[2], -16)
  for j = 1, #guardShares, 2 do takeShare(guardShares[j], member, nowText, guardShares[j + 1]) end
  if pumpOn then countInPrefix(KEYS[6], 's:', now, pumpWindow, pumpBucket) end
end
