-- KEYS: shards of one send budget (sorted sets of allowed sends' nonces, scored by Redis
-- time in ms), in the order to try them; on Redis Cluster one a call (each has its slot).
-- ARGV: window ms, member (the send's nonce, unique to it), then each shard's allowance,
-- in the order of KEYS.
-- Takes one share from the first shard with room: {its place in KEYS (1-based), 0, now};
-- when every shard is full, writes nothing: {0, ms until the first of them admits a
-- send again, now}. A shard never holds more than its allowance of sends in the window,
-- and older ones are trimmed first, so its memory is bounded by its allowance.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local wait = -1
for i, key in ipairs(KEYS) do
  local allowance = tonumber(ARGV[2 + i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count < allowance then
    redis.call('ZADD', key, now, ARGV[2])
    redis.call('PEXPIRE', key, window)
    return {i, 0, now}
  end
  -- Full: it admits a send when all but allowance - 1 of its sends have left the window.
  local frees = redis.call('ZRANGE', key, count - allowance, count - allowance, 'WITHSCORES')
  local left = tonumber(frees[2]) + window - now
  if wait < 0 or left < wait then wait = left end
end
return {0, math.max(1, wait), now}
