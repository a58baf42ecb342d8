-- reads: list
-- sets: own, sendsEnd
-- A part, included as text (`-- include: window-split`) by every script that reads a
-- number's window key (reserve.lua's window-read, peek, countdown-of-cooldown, release,
-- verify): the key's value split into its sends and its own running cooldown. The value
-- is the sends in the policy's window, 29 characters each (the send's time in 13 digits of
-- ms, then its nonce), then, for a policy that keeps its cooldown there, ';' and that
-- cooldown's value (prelude.lua's layout: read it with cooldownNonce, cooldownDeadline).
-- cooldown-write.lua writes it; the tests' reader (`WindowValue`) is held to this part by
-- a test (`CooldownValueLayoutTests`).
-- Reads `list` (the value, or nil), which it leaves as it is; declares `sendsEnd` (the
-- sends are characters 1 to sendsEnd of `list`; 0: none) and `own` (the cooldown's value,
-- or nil). Only the cooldown is cut out: a script that wants the sends alone cuts them, one
-- that only reads them reads them in place (each string made costs Redis). A new number
-- (most requests) has no window.
local own, sendsEnd = nil, 0
if list then
  local cut = string.find(list, ';', 1, true)
  if cut then own, sendsEnd = string.sub(list, cut + 1), cut - 1 else sendsEnd = #list end
end
