-- reads: held, longest, now, own, sends, step, steps, watchCooldown
-- sets: locked, observedText, reason, remaining, repair, value, wait
-- The cooldown and ladder rule's check in the reserve script (reserve.lua): a running
-- cooldown (the cooldown key's value `held[1]`, or the window's own, `own`) or a lock
-- refuses with its real wait, or is observed. Declares `value`, `remaining`, `repair` (a
-- key without expiry to give one) and `locked`; sets `reason`/`wait` or `observedText`.
-- A running cooldown refuses. A cooldown key refuses while it exists (Redis alone decides
-- that): its wait is the deadline its value holds after the nonce, when that is one the
-- gate could have set (ahead by at most the longest hold); else, or for a lock, the key's
-- PTTL. One further ahead was written on a clock ahead of Redis's (another gate's) or is a
-- longer cooldown's, and may end after the key: a wait is never longer than the longest hold
-- (as the plain path's, `Cooldowns`, never longer than its cooldown). The window's own cooldown refuses
-- until its deadline (at most the longest hold ahead). With both, the key's is the
-- cooldown (its nonce, its lock) and the wait the longer of the two.
local value, remaining, repair, locked = held[1], 0, false, false
if value then
  locked = string.sub(value, 1, 6) == 'locked'
  local deadline = not locked and cooldownDeadline(value)
  if deadline and deadline > now and deadline - now <= longest then
    remaining = deadline - now
  else
    remaining = call('PTTL', KEYS[1])
    repair = remaining == -1
    if repair then remaining = step(math.max(1, math.min(sends, steps))) + 0 end
  end
end
if own then
  local deadline = cooldownDeadline(own)
  if deadline and deadline > now then
    local left = deadline - now
    if left > longest then left = longest end
    if left > remaining then remaining = left end
    value = value or own
  end
end
if value then
  if remaining < 1 then remaining = 1 end
  if locked or not watchCooldown then
    reason, wait = 'cooldown', remaining
  else
    observedText = 'cooldown'
  end
end
