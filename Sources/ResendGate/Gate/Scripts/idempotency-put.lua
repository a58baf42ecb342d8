-- KEYS: idempotency record. ARGV: fingerprint, lifetime ms, then the answer's
-- fields (allowed, reason, wait ms, sends, next cooldown ms, Redis time ms, nonce,
-- observed rules comma-separated or '').
-- Keeps the first answer stored: 1 when this one was stored, 0 when one already was.
-- The record is one string, as reserve.lua writes it, the fingerprint last.
local record = table.concat({ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[1]}, ' ')
if call('SET', KEYS[1], record, 'NX', 'PX', ARGV[2]) then return 1 end
return 0
