-- The head of every script: GateScripts (and ReserveScripts) put it before each file's
-- own text when they load it, and so does `resendgate lua-script` for deploy tools.
-- One lookup of redis.call, not one per command:
local call = redis.call
-- Redis's clock in ms, as text and as a number: `text` when the gate sent it (Redis's
-- clock as its connection reckons it from its last TIME: RedisArguments.appendRedisNow),
-- else ('' or none) Redis's own TIME, a command as dear as the rest of a small call.
-- The text is what a command takes: a Lua number as a command's argument costs a printf.
local function clock(text)
  if text == nil or text == '' then
    local t = call('TIME')
    text = t[1] .. string.sub('00000' .. t[2], -6, -4)
  end
  return text, text + 0
end
-- A cooldown's value, the layout `CooldownValue` writes and reads in Swift (a test holds
-- the two to each other): its nonce (16 characters), its deadline in 12 hex digits of ms,
-- then maybe a space and an idempotency record's name. A lock holds 'locked…' instead.
-- Read here; made by the part cooldown-make.lua (text, not a function: Redis makes every
-- function of a script anew on each call, so the prelude defines only those most scripts use).
local function cooldownNonce(value) return string.sub(value, 1, 16) end
local function cooldownDeadline(value) return tonumber(string.sub(value, 17, 28), 16) end
