-- reads: holdMs, list, maxSends, now, sends, watchMax, window
-- sets: hold, holdMs
-- The window and max-sends rule's part of an allowed send (reserve.lua): the send that
-- fills the window holds its cooldown until the window lets the next one in.
if window > 0 and maxSends > 0 and sends >= maxSends and not watchMax then
  -- This send fills the window (it is not in `list` yet; with `max sends` 1, it is the one).
  local i = sends - maxSends + 1
  local f = i < sends and string.sub(list, i * 29 - 28, i * 29 - 16) + window - now or window
  if f > holdMs then hold, holdMs = string.format('%d', f), f end
end
