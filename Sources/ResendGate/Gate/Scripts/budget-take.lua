-- KEYS: 1 a shard of a send budget (a sorted set of allowed sends' members, scored by Redis
-- time in ms), in a slot of its own: on a Redis Cluster a send tries a budget's shards one
-- call each (SendBudgets.swift). On one Redis the reserve script decides budgets
-- itself (fraud-guard.lua).
-- ARGV: 1 now, Redis's clock in ms as the gate's connection reckons it ('': the script asks
-- TIME), 2 member (a nonce of the send's own), 3 the budget's window in ms, 4 the shard's
-- allowance.
-- Takes a share when the shard has room: {1, 0, now}; else writes nothing and answers
-- {0, ms until the shard admits a send again, now}. A shard never holds more than its
-- allowance of sends in its window (budget-room.lua).
local nowText, now = clock(ARGV[1])
local first, shards, limit, window, member = KEYS[1], 1, ARGV[4] + 0, ARGV[3] + 0, ARGV[2]
local room, roomWait
-- include: budget-room
if not room then return {0, roomWait, now} end
-- include: budget-count
return {1, 0, now}
