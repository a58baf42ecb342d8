-- KEYS: 1 cooldown, 2 window (a countdown token names the number: both are its keys).
-- ARGV: 1 the nonce the token holds, 2 now (Redis's clock, below).
-- {remaining ms, Redis time ms} (the nonce is the caller's own: what a release publishes),
-- or {-2, now} when the cooldown is gone or holds another nonce (it was released, or
-- replaced by a later send, or wrong codes locked the number). The running cooldown is
-- the cooldown key's while there is one, else the window's own, after its sends' ';'
-- (window-split.lua). Either is a cooldown value (prelude.lua): the nonce, then the
-- deadline. The time left is counted to that deadline, as the send's answer was, or to
-- the key's end (its PTTL) when that is later: the gate's reckoning of Redis's clock is a few ms off
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
else
  local list = held[2]
  -- include: window-split
  if own and cooldownNonce(own) == ARGV[1] then remaining = (cooldownDeadline(own) or 0) - now end
end
if remaining < 1 then return {-2, now} end
return {remaining, now}
