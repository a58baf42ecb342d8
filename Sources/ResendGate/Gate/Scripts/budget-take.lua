-- parts: budget-shards
-- KEYS: the shards of each send budget the send must fit in (sorted sets of allowed sends'
-- nonces, scored by Redis time in ms), budget after budget, each budget's in the order to
-- try them. On one Redis every budget of a send comes in one call; on Redis Cluster one
-- shard a call (each has its slot).
-- ARGV: 1 now, Redis's clock in ms as the gate's connection reckons it ('': the script asks
-- TIME, as dear as the rest of a small call), 2 member (the send's nonce, unique to it),
-- then for each budget, in the order of KEYS: its number of shards, its window in ms, '1'
-- when it is only observed ('0' else), then each of its shards' allowance.
-- Takes one share of every budget, from the first of its shards with room, or none:
-- {0, 0, now, then for each budget the place (1-based, among its shards) of the shard
-- that gave its share, or 0 for an observed budget that was full (it takes nothing)}.
-- When a budget that is not observed is full, writes nothing and answers
-- {its place among the budgets (1-based), ms until its first shard admits a send again,
-- now, then the places of the budgets before it, as above}.
-- A shard never holds more than its allowance of sends in its window (budget-shards.lua).
-- Numbers go to Redis as text (a Lua number as a command's argument costs a printf).
local nowText, now = clock(ARGV[1])
local member = ARGV[2]
-- The budgets must add up to KEYS and ARGV exactly: a budget cut short would go unchecked.
local nargs, nkeys, at, first = #ARGV, #KEYS, 3, 0
while at <= nargs do
  local shards = ARGV[at] + 0
  if shards < 1 then break end
  first, at = first + shards, at + 3 + shards
end
if at ~= nargs + 1 or first ~= nkeys or nkeys == 0 then
  return redis.error_reply('budget-take: ' .. nkeys .. ' keys and ' .. nargs .. ' arguments do not make whole budgets')
end
local reply, chosen = {0, 0, now}, {}
local budget = 0
at, first = 3, 0
while at <= nargs do
  budget = budget + 1
  local shards, window, observed = ARGV[at] + 0, ARGV[at + 1] + 0, ARGV[at + 2] == '1'
  local base, cut = first, at + 2
  local place, wait = shardWithRoom(shards, function(i) return KEYS[base + i] end,
    function(i) return ARGV[cut + i] + 0 end, window, now)
  if place == 0 and not observed then
    reply[1], reply[2] = budget, wait
    return reply
  end
  reply[#reply + 1] = place
  if place > 0 then chosen[#chosen + 1] = {KEYS[first + place], window} end
  first, at = first + shards, at + 3 + shards
end
for _, share in ipairs(chosen) do takeShare(share[1], member, nowText, share[2]) end
return reply
