-- KEYS: 1 cooldown, 2 sends, 3 refunds (sorted set of refunded sends' tokens, by
--       time), 4 idempotency link.
-- ARGV: 1 refund window ms, 2 max refunds (at least 1), 3 '1' to delete the linked
--       idempotency record here (one Redis), '0' to return its name (a cluster, where
--       it lives in another slot), 4 the channel releases are announced on.
-- Ends the running cooldown and refunds its send (that send leaves the window, so
-- the ladder step and the count go back by one) unless the window already holds
-- `max refunds` refunds; the refund is recorded, so at most that many sends are
-- given back per window. Also voids the idempotency record of the refunded send.
-- Publishes the cooldown's nonce (which its countdown tokens carry) on the channel,
-- in the same script, so every gate ends the event streams that follow it.
-- Returns {1, 0, voided record name or ''} refunded, {0, 0, ''} when no cooldown
-- runs (nothing is consumed), {-1, ms until the oldest refund leaves the window, ''}
-- past the limit, {-2, ms the lock has left, ''} for a locked number (nothing changes).
local token = redis.call('GET', KEYS[1])
if not token then return {0, 0, ''} end
-- A number locked by wrong codes (verify.lua) is not a cooldown to refund.
if string.sub(token, 1, 6) == 'locked' then return {-2, redis.call('PTTL', KEYS[1]), ''} end
-- The cooldown's nonce: its value's first 16 characters (a plain cooldown's key holds
-- its deadline after them).
token = string.sub(token, 1, 16)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  return {-1, tonumber(oldest[2]) + window - now, ''}
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[4], token)
redis.call('ZREM', KEYS[2], token)
redis.call('ZADD', KEYS[3], now, token)
redis.call('PEXPIRE', KEYS[3], window)
local voided = ''
local link = redis.call('GET', KEYS[4])
if link then
  local space = string.find(link, ' ', 1, true)
  if space and string.sub(link, 1, space - 1) == token then
    voided = string.sub(link, space + 1)
    if ARGV[3] == '1' then redis.call('DEL', voided) end
  end
  redis.call('DEL', KEYS[4])
end
return {1, 0, voided}
