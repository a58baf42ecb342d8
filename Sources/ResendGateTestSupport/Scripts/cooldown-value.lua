-- What the scripts' cooldown layout makes (cooldown-make.lua) and reads (prelude.lua) (a test holds it to CooldownValue.swift):
-- ARGV 1 a nonce, 2 a deadline in ms, 3 a value to read.
-- Returns {the value of the nonce and deadline, the nonce read, the deadline read or -1}.
local token, deadline = ARGV[1], ARGV[2] + 0
-- include: cooldown-make
return {cooldown, cooldownNonce(ARGV[3]), cooldownDeadline(ARGV[3]) or -1}
