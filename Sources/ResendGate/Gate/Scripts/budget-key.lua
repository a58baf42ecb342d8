-- reads: first
-- sets: kind
-- A part, included as text (`-- include: budget-key`): what a budget shard's name says, the
-- one place Lua reads the name `GateKeys.budgetShard` spells,
-- '<prefix>:budget:{<scope>:<kind>:<shard>}' (the shard one digit; a scope holds no colon):
-- `kind`, after the first colon past the brace. budget-room.lua names a budget's other
-- shards from `first` (its last two characters are the shard and '}'). A test holds both
-- to GateKeys on generated names (`BudgetKeyLayoutTests`).
local kind = string.sub(first, string.find(first, ':', string.find(first, '{', 1, true) + 2, true) + 1, -4)
