-- The reserve script's part for send budgets and the SMS-pumping guard on one Redis or
-- Sentinel, for a policy with either: ReserveScripts puts this file right after the
-- policy block, guard-check.lua and guard-count.lua where reserve.lua includes them, and
-- NAME.lua for each line `-- include: NAME`: every rule of a send in one call,
-- atomically, so nothing is held while another step decides and nothing is given back.
-- On a Redis Cluster a budget's shards and a prefix live in slots of their own: there
-- they are steps of their own (budget-take.lua, pumping.lua; SendBudgets.swift).
-- KEYS, after reserve.lua's four: with the guard on, 5 the number's `trusted` mark and
-- 6 the prefix's counts; then, from KEYS[firstBudgetKey], for each budget the send must
-- fit in, the shard the send tries first (its other shards' names are that one's with
-- another number: keys a script reaches without naming them, which one Redis allows).
-- ARGV[2] ends with the member the budgets count the send under (a nonce of its own).
-- The block says where KEYS' budgets begin and gives the guard's figures (each budget's
-- are in budget-policy.lua). As written here it is the policy `deploy/dev/bench --only cost`
-- adds to every rule (with budget-policy.lua's budgets; the guard over an hour in ten
-- buckets, 10 000 000 sends before it judges, 10 % conversion), which `deploy/dev/script-cost
-- --script reserve-guarded` measures.
-- guard policy (ReserveScripts writes this block for each purpose with either)
local firstBudgetKey, codeKeys = 7, 0
local pumpOn, pumpObserved = true, false
local pumpWindow, pumpBucket = 3600000, 360000
local pumpMinSends, pumpPPM = 10000000, 100000
-- end of guard policy
-- What the guard found (guard-check.lua; guard-count.lua takes the shares): the rules it
-- observes that would have refused (comma-separated), whether the prefix is due in the
-- registry, and the shares an allowed send takes (three limits in variables, a region's, a
-- calling code's, the total; more in `shares`, a shard then its window each), each a shard and its window.
local guardObserved, guardRegister = '', false
local share1, share1Window, share2, share2Window, share3, share3Window, shares
