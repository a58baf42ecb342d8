-- KEYS: cooldown, sends. ARGV: window ms, max sends (0: none). Returns {wait ms,
-- Redis time ms}, never writing: the cooldown's PTTL (-2 none, -1 no expiry), or,
-- when the window already holds `max sends`, until its oldest send leaves it if that
-- is later. The cooldown key normally lasts that long already; this also covers
-- windows filled before it did, or under a higher `max sends`.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait = redis.call('PTTL', KEYS[1])
local window, maxSends = tonumber(ARGV[1]), tonumber(ARGV[2])
if maxSends > 0 and redis.call('ZCOUNT', KEYS[2], '(' .. (now - window), '+inf') >= maxSends then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  wait = math.max(wait, tonumber(oldest[2]) + window - now)
end
return {wait, now}
