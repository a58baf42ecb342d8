-- reads: firstHold, firstHoldMs, sends, step, steps
-- sets: hold, holdMs, sends
-- The cooldown and ladder rule's part of an allowed send (reserve.lua): this send is
-- counted, and its cooldown is its ladder step (`hold` as text, `holdMs` in ms).
sends = sends + 1
if sends == 1 then
  hold, holdMs = firstHold, firstHoldMs
else
  hold = step(sends < steps and sends or steps)
  holdMs = hold + 0
end
