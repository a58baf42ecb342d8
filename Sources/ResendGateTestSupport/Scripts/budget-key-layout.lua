-- What budget-key.lua and budget-room.lua make of a budget shard's name (a test holds them
-- to `GateKeys.budgetShard`): ARGV 1 the name, 2 the budget's limit, 3 its shards, 4 its
-- window in ms, 5 now in ms. Returns {its kind, the shard budget-room.lua finds room in ('':
-- none)}.
local first, limit, shards, window, now = ARGV[1], ARGV[2] + 0, ARGV[3] + 0, ARGV[4] + 0, ARGV[5] + 0
-- include: budget-key
local room, roomWait
-- include: budget-room
return {kind, room or ''}
