-- reads: list, maxSends, now, observedText, sends, wait, watchMax, window
-- sets: observedText, reason, wait
-- The window and max-sends rule's check in the reserve script (reserve.lua): a full
-- window refuses until its oldest counted send leaves it, or is observed.
if maxSends > 0 and sends >= maxSends and watchMax then
  observedText = observedText == '' and 'max_sends' or observedText .. ',max_sends'
elseif maxSends > 0 and sends >= maxSends then
  -- The send that filled the window stretched its cooldown to this same moment
  -- (give or take Redis's millisecond rounding): then max_sends is what binds. The
  -- window lets the next send in when the send `max sends` back from the newest leaves.
  local i = sends - maxSends + 1
  local f = string.sub(list, i * 29 - 28, i * 29 - 16) + window - now
  if f + 2 >= wait then reason, wait = 'max_sends', math.max(f, wait) end
end
