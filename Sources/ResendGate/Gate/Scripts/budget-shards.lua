-- A part (after prelude.lua) of the scripts that take budget shares: budget-take.lua, and
-- the reserve script of a policy with budgets on one Redis (fraud-guard.lua).
-- A budget's shard is a sorted set of its allowed sends' members, scored by Redis's time
-- in ms. It is counted with ZCARD alone: it may hold sends older than the window, which
-- matter only when the count reaches the allowance; then they are removed (and the count
-- taken again). So it never holds more than its allowance, and a send to a shard with
-- room costs one read, not two.

-- The first of a budget's `shards` with room, trying them in order (`key(i)` names the
-- i-th to try, `allowance(i)` what it may hold): its place (1-based), or 0 and the ms
-- until the soonest of them admits a send again (when all but allowance - 1 of its sends
-- have left the window).
local function shardWithRoom(shards, key, allowance, window, now)
  local wait = -1
  for i = 1, shards do
    local k, most = key(i), allowance(i)
    local count = call('ZCARD', k)
    if count >= most then
      call('ZREMRANGEBYSCORE', k, '-inf', now - window)
      count = call('ZCARD', k)
    end
    if count < most then return i, 0 end
    local frees = call('ZRANGE', k, count - most, count - most, 'WITHSCORES')
    local left = frees[2] + window - now
    if wait < 0 or left < wait then wait = left end
  end
  return 0, math.max(1, wait)
end

-- Counts the send `member` in a shard. The shard outlives its newest send by the window,
-- plus at most an eighth of it: its expiry is renewed only when less than the window is
-- left (a read most sends, not a write).
local function takeShare(key, member, nowText, window)
  call('ZADD', key, nowText, member)
  if call('PTTL', key) < window then call('PEXPIRE', key, string.format('%d', window + window / 8)) end
end
