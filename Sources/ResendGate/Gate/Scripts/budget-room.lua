-- reads: first, limit, now, shards, window
-- sets: room, roomWait
-- A part, included as text (`-- include: budget-room`) where a send budget's shard is
-- chosen: fraud-guard.lua's check and budget-take.lua. Text, not a function: Redis makes
-- every function of a script anew on each call (a closure costs about as much as a small
-- command).
-- A budget's shard is a sorted set of its allowed sends' members, scored by Redis's time
-- in ms. It is counted with ZCARD alone: it may hold sends older than the window, which
-- matter only when the count reaches the allowance; then they are removed (and the count
-- taken again). So it never holds more than its allowance, and a send to a shard with
-- room costs one read, not two.
-- Reads `first` (the shard the send tries first; a shard's name ends with its number, one
-- digit, and '}'), `shards`, `limit`, `window` (ms) and `now`; tries the shards in order
-- from `first` (shard n may hold `limit / shards` sends, one more for the first
-- `limit % shards`) and sets `room` to the name of the first with room, or to nil and
-- `roomWait` to the ms until the soonest of them admits a send again (when all but
-- allowance - 1 of its sends have left the window). The includer declares both.
room, roomWait = nil, -1
do
  local start, even, extra = string.byte(first, -2) - 48, (limit - limit % shards) / shards, limit % shards
  for i = 0, shards - 1 do
    local n = (start + i) % shards
    local key, most = i == 0 and first or string.sub(first, 1, -3) .. n .. '}', even + (n < extra and 1 or 0)
    local count = call('ZCARD', key)
    if count >= most then
      call('ZREMRANGEBYSCORE', key, '-inf', now - window)
      count = call('ZCARD', key)
    end
    if count < most then
      room = key
      break
    end
    local frees = call('ZRANGE', key, count - most, count - most, 'WITHSCORES')
    local left = frees[2] + window - now
    if roomWait < 0 or left < roomWait then roomWait = left end
  end
  if room then roomWait = 0 else roomWait = math.max(1, roomWait) end
end
