-- KEYS: the IP's sends. ARGV: cap, window ms, member (the send's countdown token,
-- unique to it). Takes a share of the IP's cap before the number is decided:
-- {1, ms until the IP may send again once this share counts (0 while it is under its
-- cap)} or {0, wait ms}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= cap then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
if count + 1 < cap then return {1, 0} end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, tonumber(oldest[2]) + window - now}
