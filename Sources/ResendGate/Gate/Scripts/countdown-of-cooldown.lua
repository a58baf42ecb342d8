-- KEYS: a cooldown (which a countdown token names). ARGV: the nonce the token holds.
-- {remaining ms, Redis time ms, the cooldown's nonce (what a release publishes)}, or
-- {-2, ...} when the cooldown is gone or holds another nonce (it was released, or
-- replaced by a later send). The nonce is the value's first 16 characters (a plain
-- cooldown's key holds its deadline after them).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local value = redis.call('GET', KEYS[1])
if not value or string.sub(value, 1, 16) ~= ARGV[1] then return {-2, now} end
local remaining = redis.call('PTTL', KEYS[1])
if remaining < 1 then return {-2, now} end
return {remaining, now, ARGV[1]}
