-- KEYS: idempotency record. ARGV: 1 the record (`ReserveAnswer.record`: the answer as
-- reserve.lua makes it, a space and the request's fingerprint), 2 the lifetime ms of an
-- allowed send's record, 3 '1' for an allowed send, '0' for a denial, 4 the wait ms.
-- Keeps the first answer stored, for as long as reserve.lua keeps it (idempotency-keep.lua):
-- 1 when this one was stored, 0 when one already was.
local allowed, waitText, lifetimeText = ARGV[3] == '1', ARGV[4], ARGV[2]
local wait, lifetime = waitText + 0, lifetimeText + 0
-- include: idempotency-keep
if call('SET', KEYS[1], ARGV[1], 'NX', 'PX', keepFor) then return 1 end
return 0
