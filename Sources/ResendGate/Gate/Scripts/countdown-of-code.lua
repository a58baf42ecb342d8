-- KEYS: 1 the number's issued code (code-issue.lua).
-- ARGV: 1 the code's identity the token holds (the nonce of the send that issued it),
--       2 now (Redis's clock, prelude.lua's `clock`).
-- A code countdown token's lookup: {ms until the code expires, Redis time ms} while the
-- code is live (neither used, voided nor locked), else {-2, now}.
-- Nothing about the code itself leaves Redis.
local _, now = clock(ARGV[2])
local codeRecord = call('GET', KEYS[1])
if not codeRecord then return {-2, now} end
-- include: code-split
if codeIdentity ~= ARGV[1] or not codeWrong then return {-2, now} end
local remaining = codeExpiry - now
if remaining < 1 then return {-2, now} end
return {remaining, now}
