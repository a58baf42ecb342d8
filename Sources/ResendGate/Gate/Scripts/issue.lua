-- The default policy's send (one cooldown, nothing counted) for a purpose that issues
-- codes: the plain `SET … NX PX … GET` of `Cooldowns`, and on an allowed send its code
-- (code-issue.lua, code-write.lua), in one call: a send is never allowed without its code
-- stored, nor a code stored for a refused send.
-- KEYS: 1 cooldown, 2 the number's issued code.
-- ARGV: 1 the cooldown's value (`CooldownValue`: the send's nonce, then its deadline),
--       2 the cooldown in ms, 3 now (the gate's clock, as the cooldown's deadline is:
--       the plain send's `server_time`), 4 the new code's identity, digest and seal (`CodeRecord`), 5 the code's lifetime
--       in ms, 6 'same' or 'fresh' (`IssuedCodes.Resend`).
-- Returns the running cooldown's value when one refuses the send (as the SET's GET does),
-- or {the code's record} for an allowed send.
local prior = call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'GET')
if prior then return prior end
local _, now = clock(ARGV[3])
local allowed, codeKey, codeArg = true, KEYS[2], ARGV[4]
local codeLife, codeLifeText, codeSame = tonumber(ARGV[5]), ARGV[5], ARGV[6] == 'same'
local codeText, codeWrite = '', false
-- include: code-issue
-- include: code-write
return {codeText}
