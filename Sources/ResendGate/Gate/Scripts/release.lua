-- KEYS: 1 cooldown, 2 window (the sends in it, as reserve.lua keeps them), 3 refunds
--       (sorted set of refunded sends' nonces, by time), 4 for a purpose that issues
--       codes, the number's code (code-issue.lua).
-- ARGV: 1 refund window ms, 2 max refunds (at least 1), 3 '1' to delete the linked
--       idempotency record here (one Redis), '0' to return its name (a cluster, where
--       it lives in another slot), 4 the channel releases are announced on, 5 now
--       (Redis's clock, below).
-- Ends the running cooldown and refunds its send (that send leaves the window, so
-- the ladder step and the count go back by one) unless the window already holds
-- `max refunds` refunds; the refund is recorded, so at most that many sends are
-- given back per window. Also voids the idempotency record of the refunded send (the
-- cooldown's value names it after a space).
-- The running cooldown is the cooldown key's, when there is one (a policy without a
-- window, a lock, a cooldown begun under a plain policy), else the window's own: the
-- value after its sends' ';', until its deadline (reserve.lua).
-- Publishes the cooldown's nonce (which its countdown tokens carry) on the channel,
-- in the same script, so every gate ends the event streams that follow it. A refund also
-- voids the number's live issued code (the SMS failed: nobody got it), keeping its expiry
-- so a check of it says so, and publishes its identity (its countdown's streams end).
-- Returns {1, 0, voided record name or ''} refunded, {0, 0, ''} when no cooldown
-- runs (nothing is consumed), {-1, ms until the oldest refund leaves the window, ''}
-- past the limit, {-2, ms the lock has left, ''} for a locked number (nothing changes).
-- Redis's clock: ARGV[5] (prelude.lua's `clock`).
local _, now = clock(ARGV[5])
local value = call('GET', KEYS[1])
-- A number locked by wrong codes (verify.lua) is not a cooldown to refund.
if value and string.sub(value, 1, 6) == 'locked' then return {-2, call('PTTL', KEYS[1]), ''} end
-- The window's sends and its own cooldown after them (`own`, window-split.lua): that
-- cooldown, while it runs and no key holds one, is the one refunded.
local list = call('GET', KEYS[2])
local window = list
-- include: window-split
if not value and own then
  local deadline = cooldownDeadline(own)
  if deadline and deadline > now then value, own = own, nil end
end
if not value then return {0, 0, ''} end
-- The cooldown's nonce: its value's first 16 characters. After them comes its deadline
-- (12 hex digits), then, for a send with an idempotency record, a space and the record's
-- name (a value an older version wrote may have the space right after the nonce).
local token = cooldownNonce(value)
local record = ''
local space = string.find(value, ' ', 17, true)
if space then record = string.sub(value, space + 1) end
local refundWindow = tonumber(ARGV[1])
call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - refundWindow)
if call('ZCARD', KEYS[3]) >= tonumber(ARGV[2]) then
  local oldest = call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  return {-1, tonumber(oldest[2]) + refundWindow - now, ''}
end
call('DEL', KEYS[1])
call('PUBLISH', ARGV[4], token)
-- The refunded send leaves the window: its 29 characters (time, then nonce) go, and so
-- does the window's own cooldown when it was the one refunded.
if window then
  list = sendsEnd < #list and string.sub(list, 1, sendsEnd) or list
  for at = 1, #list - 28, 29 do
    if string.sub(list, at + 13, at + 28) == token then
      list = string.sub(list, 1, at - 1) .. string.sub(list, at + 29)
      break
    end
  end
  local rest = own and list .. ';' .. own or list
  if rest == '' then
    call('DEL', KEYS[2])
  elseif rest ~= window then
    call('SET', KEYS[2], rest, 'KEEPTTL')
  end
end
if KEYS[4] then
  local codeRecord = call('GET', KEYS[4])
  if codeRecord then
    -- include: code-split
    if codeWrong then
      codeState = 'vv'
      -- include: code-make
      call('SET', KEYS[4], codeRecord, 'KEEPTTL')
      call('PUBLISH', ARGV[4], codeIdentity)
    end
  end
end
call('ZADD', KEYS[3], now, token)
call('PEXPIRE', KEYS[3], refundWindow)
if record ~= '' and ARGV[3] == '1' then call('DEL', record) end
return {1, 0, record}
