-- reads: deadline, token
-- sets: cooldown
-- A part, included as text (`-- include: cooldown-make`) where a cooldown's value is made
-- (cooldown-write.lua): the layout prelude.lua's cooldownNonce and cooldownDeadline read.
-- Reads `token` (the nonce, 16 characters) and `deadline` (ms); declares `cooldown`.
local cooldown = token .. string.format('%012x', deadline)
