-- KEYS: 1 cooldown, 2 window (a countdown token names the number: both are its keys).
-- ARGV: 1 the nonce the token holds, 2 now (Redis's clock, below).
-- {remaining ms, Redis time ms, the cooldown's nonce (what a release publishes)}, or
-- {-2, ...} when the cooldown is gone or holds another nonce (it was released, or
-- replaced by a later send, or wrong codes locked the number). The running cooldown is
-- the cooldown key's while there is one, else the window's own, after its sends' ';'
-- (reserve.lua). Either value begins with the nonce, then the deadline in 12 hex digits of
-- ms. The time left is counted to that deadline, as the send's answer was, or to the key's
-- end (its PTTL) when that is later: the gate's reckoning of Redis's clock is a few ms off
-- Redis's own, and the countdown must neither move the "resend at" the send answered nor
-- end while the key still refuses a send.
-- Redis's clock: ARGV[2] (prelude.lua's `clock`).
local _, now = clock(ARGV[2])
local held = call('MGET', KEYS[1], KEYS[2])
local remaining = -2
if held[1] then
  if cooldownNonce(held[1]) == ARGV[1] then
    remaining = math.max((cooldownDeadline(held[1]) or 0) - now, call('PTTL', KEYS[1]))
  end
elseif held[2] then
  local cut = string.find(held[2], ';', 1, true)
  if cut and string.sub(held[2], cut + 1, cut + 16) == ARGV[1] then
    remaining = (tonumber(string.sub(held[2], cut + 17, cut + 28), 16) or 0) - now
  end
end
if remaining < 1 then return {-2, now} end
return {remaining, now, ARGV[1]}
