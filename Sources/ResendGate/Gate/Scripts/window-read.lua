-- reads: keepSends, list, now, window
-- sets: list, own, sends
-- The window and max-sends rule's part of the reserve script (reserve.lua includes it
-- right after the one MGET of the number's cooldown and window keys): the sends still in
-- the window. Reads `list` (the window key's value, or nil), `window`, `keepSends` and
-- `now`; sets `list` to the sends (29 characters each) and declares `sends` (how many),
-- `own` (the cooldown the window key keeps after its sends' ';', or nil) and `sendsEnd`
-- (window-split).
-- The sends and the window's own cooldown, or nil. A policy without a window reads it too:
-- one with a window may have written it (a purpose whose policy changed, `WindowCooldowns`).
-- include: window-split
-- The sends still in the window, as the key holds them (`list`), most often oldest first:
-- at most the last `keepSends`, more than any rule reads (max sends, or the ladder's
-- steps), which bounds the key. Every send's time is read, since a clock that stepped
-- back (or a failover to a replica with a slower one) can leave an old send after a new
-- one; the list is split and joined again only when one of them left the window.
-- A new number (most requests) has no window: it skips the parsing.
if sendsEnd == 0 or window == 0 then
  list = ''
else
  if own then list = string.sub(list, 1, sendsEnd) end
  -- Whole sends only (a value cut short loses its last fragment).
  local since, whole, stale = now - window, #list - #list % 29, false
  for at = 1, whole - 28, 29 do
    if string.sub(list, at, at + 12) + 0 <= since then
      stale = true
      break
    end
  end
  if stale then
    local kept = {}
    for at = 1, whole - 28, 29 do
      if string.sub(list, at, at + 12) + 0 > since then kept[#kept + 1] = string.sub(list, at, at + 28) end
    end
    list = table.concat(kept)
  elseif whole < #list then
    list = string.sub(list, 1, whole)
  end
  if #list > keepSends * 29 then list = string.sub(list, -keepSends * 29) end
end
local sends = #list / 29
