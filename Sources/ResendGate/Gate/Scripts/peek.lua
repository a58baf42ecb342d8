-- KEYS: cooldown, window (the sends in it, as reserve.lua keeps them). ARGV: window ms
-- (0: the policy has none), max sends (0: none), now (Redis's clock, below). Returns
-- {wait ms, Redis time ms}, never writing: the running cooldown's (until the deadline the
-- cooldown key's value holds, as the send's answer counted it, or the key's end when that
-- is later, as countdown-of-cooldown.lua; a lock's, the key's PTTL: -2 none, -1 no
-- expiry; or the window's own, after its sends' ';', until its deadline: read whatever
-- the policy, since one with a window may have written it), or, when the window already
-- holds `max sends`, until the send whose leaving lets the next one in leaves it, if that
-- is later. The cooldown normally lasts that long already; this also covers windows
-- filled before it did, or under a higher `max sends`.
-- Redis's clock: ARGV[3] (prelude.lua's `clock`).
local _, now = clock(ARGV[3])
local value = call('GET', KEYS[1])
local wait = value and call('PTTL', KEYS[1]) or -2
if value and wait > 0 and string.sub(value, 1, 6) ~= 'locked' then
  wait = math.max(wait, (cooldownDeadline(value) or 0) - now)
end
local list = call('GET', KEYS[2])
-- include: window-split
local deadline = own and cooldownDeadline(own)
if deadline and deadline > now then wait = math.max(wait, deadline - now) end
local window, maxSends = tonumber(ARGV[1]), tonumber(ARGV[2])
if window > 0 and maxSends > 0 then
  local times = {}
  for at = 1, sendsEnd - 28, 29 do
    local sent = tonumber(string.sub(list, at, at + 12))
    if sent > now - window then times[#times + 1] = sent end
  end
  if #times >= maxSends then wait = math.max(wait, times[#times - maxSends + 1] + window - now) end
end
return {wait, now}
