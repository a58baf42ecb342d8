-- reads: cooldownInWindow, fingerprint, held, hold, holdMs, keepSends, list, now, nowText, token
-- reads: window, windowLifeText
-- sets: list
-- The cooldown and window rules' writes for an allowed send (reserve.lua): its cooldown
-- (with the link to its idempotency record, so a refund voids it) and the window's sends,
-- in the window key (`cooldownInWindow`) or in the cooldown key.
-- The cooldown (a plain cooldown's layout), and the link to the idempotency record:
-- KEYS[4] on one Redis, ARGV[5] on a cluster.
local link = fingerprint ~= '' and KEYS[4] or ARGV[5] or ''
local deadline = now + holdMs
-- include: cooldown-make
cooldown = cooldown .. (link == '' and '' or ' ') .. link
-- The window keeps the last `keepSends` sends: this one goes in, the oldest out when full.
if #list >= keepSends * 29 then list = string.sub(list, 30) end
if cooldownInWindow then
  -- In the window key, after the sends: one key, one write. A cooldown key that let
  -- this send through (an observed cooldown) would outlast it, so it goes.
  call('SET', KEYS[2], list .. nowText .. token .. ';' .. cooldown, 'PX', windowLifeText)
  if held[1] then call('DEL', KEYS[1]) end
else
  if window > 0 then call('SET', KEYS[2], list .. nowText .. token, 'PX', windowLifeText) end
  call('SET', KEYS[1], cooldown, 'PX', hold)
end
