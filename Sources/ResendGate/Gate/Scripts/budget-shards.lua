-- A part (after prelude.lua) of the scripts that take budget shares: budget-take.lua, and
-- the reserve script of a policy with budgets on one Redis (fraud-guard.lua).
-- A budget's shard is a sorted set of its allowed sends' members, scored by Redis's time
-- in ms. It is counted with ZCARD alone: it may hold sends older than the window, which
-- matter only when the count reaches the allowance; then they are removed (and the count
-- taken again). So it never holds more than its allowance, and a send to a shard with
-- room costs one read, not two.

-- The first of a budget's `shards` with room, trying them in order from shard `start`
-- (`first` names it; the others are named `base`, their number and '}'); shard n may hold
-- `limit / shards` sends, one more for the first `limit % shards`: the name of the shard
-- with room, or nil and the ms until the soonest of them admits a send again (when all
-- but allowance - 1 of its sends have left the window). No closure and no table is made
-- per call: in Redis each is an allocation that costs as much as a small command.
local function shardWithRoom(first, base, start, shards, limit, window, now)
  local wait, even, extra = -1, (limit - limit % shards) / shards, limit % shards
  for i = 0, shards - 1 do
    local n = (start + i) % shards
    local key, most = i == 0 and first or base .. n .. '}', even + (n < extra and 1 or 0)
    local count = call('ZCARD', key)
    if count >= most then
      call('ZREMRANGEBYSCORE', key, '-inf', now - window)
      count = call('ZCARD', key)
    end
    if count < most then return key, 0 end
    local frees = call('ZRANGE', key, count - most, count - most, 'WITHSCORES')
    local left = frees[2] + window - now
    if wait < 0 or left < wait then wait = left end
  end
  return nil, math.max(1, wait)
end

-- Counts the send `member` in a shard. The shard outlives its newest send by the window,
-- plus at most an eighth of it: its expiry is renewed only when less than the window is
-- left (a read most sends, not a write).
local function takeShare(key, member, nowText, window)
  call('ZADD', key, nowText, member)
  if call('PTTL', key) < window then call('PEXPIRE', key, string.format('%d', window + window / 8)) end
end
