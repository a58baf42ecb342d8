-- reads: kind
-- sets: limit, observed, reason, shards, window
-- A part of guard-check.lua that ReserveScripts writes for each purpose's policy (as written
-- here, the budgets of deploy/dev/bench's cost policy: one for CN and a total one, 10 000 000 a
-- day in 8 shards each): the figures of the budget of `kind` (a region, a calling code, or
-- `total`): its limit, shards, window in ms, whether it is observed, and the reason a full
-- one gives. A chain of tests, not a table: a table is an allocation on every call.
local limit, shards, window, observed, reason
if kind == 'CN' then
  limit, shards, window, observed, reason = 10000000, 8, 86400000, false, 'country_limit'
elseif kind == 'total' then
  limit, shards, window, observed, reason = 10000000, 8, 86400000, false, 'global_limit'
end
