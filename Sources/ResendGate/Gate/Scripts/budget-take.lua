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
-- A shard never holds more than its allowance of sends in its window, and older ones are
-- trimmed first, so its memory is bounded by its allowance.
-- A shard is counted with ZCARD alone: it may hold sends older than the window, which
-- matter only when the count reaches the allowance; then they are removed (and the count
-- taken again). So it never holds more than its allowance, and a send to a shard with
-- room costs one read, not two.
-- Numbers go to Redis as text (a Lua number as a command's argument costs a printf).
local nowText = ARGV[1]
if nowText == '' then
  local t = redis.call('TIME')
  nowText = t[1] .. string.sub('00000' .. t[2], -6, -4)
end
local now = nowText + 0
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
  local place, wait = 0, -1
  for i = 1, shards do
    local key, allowance = KEYS[first + i], ARGV[at + 2 + i] + 0
    local count = redis.call('ZCARD', key)
    if count >= allowance then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
      count = redis.call('ZCARD', key)
    end
    if count < allowance then
      place = i
      break
    end
    -- Full: it admits a send when all but allowance - 1 of its sends have left the window.
    local frees = redis.call('ZRANGE', key, count - allowance, count - allowance, 'WITHSCORES')
    local left = frees[2] + window - now
    if wait < 0 or left < wait then wait = left end
  end
  if place == 0 and not observed then
    reply[1], reply[2] = budget, math.max(1, wait)
    return reply
  end
  reply[#reply + 1] = place
  if place > 0 then chosen[#chosen + 1] = {KEYS[first + place], ARGV[at + 1]} end
  first, at = first + shards, at + 3 + shards
end
for _, share in ipairs(chosen) do
  redis.call('ZADD', share[1], nowText, member)
  redis.call('PEXPIRE', share[1], share[2])
end
return reply
