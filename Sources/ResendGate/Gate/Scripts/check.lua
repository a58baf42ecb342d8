-- KEYS: 1 the number's issued code (code-issue.lua), 2 cooldown, 3 trusted (the pumping
--       guard's mark).
-- ARGV: 1 the typed code's digest (`CodeSealer.digest`), 2 wrong checks a code may have
--       (at least 1), 3 lockout ms, 4 trusted ms ('0': the pumping guard is off), 5 the
--       pumping guard's window ms, 6 now (Redis's clock, prelude.lua's `clock`), 7 the
--       lockout's scope: 'code' or 'number'.
-- A check of a code the gate issued, decided here once for every gate: the digests are
-- HMACs under the code secret, which Redis never sees, so comparing them leaks nothing a
-- guesser can use. While the number is locked (its cooldown key holds 'locked', scope
-- 'number') nothing changes: {-1, ms the lock has left}. No live code: {-4, 0} (expired,
-- or never issued), {-5, 0} (used), {-6, 0} (voided by a refund), {-3, ms until the
-- number's running cooldown ends} (locked by wrong checks).
-- The right code is used up ('uu'), so a second check of it is refused: then the pumping
-- guard's mark (trust-mark.lua): {1, 1} or {1, 0}. A wrong one counts in the code's own
-- record: {0, checks left}; the last one locks the code ('xx': {-3, ...}) and, scope
-- 'number', the number for the lockout (or its running cooldown, if longer): {-1, lock ms}.
-- Every state change keeps the code's expiry (KEEPTTL), so each code is counted once,
-- for its whole lifetime, whatever the cooldown does.
local _, now = clock(ARGV[6])
local held = call('MGET', KEYS[1], KEYS[2])
local codeRecord, cooldown = held[1], held[2]
if cooldown and string.sub(cooldown, 1, 6) == 'locked' then return {-1, call('PTTL', KEYS[2])} end
if not codeRecord then return {-4, 0} end
-- include: code-split
if codeExpiry <= now then return {-4, 0} end
if codeState == 'uu' then return {-5, 0} end
if codeState == 'vv' then return {-6, 0} end
if codeState == 'xx' then return {-3, math.max(0, call('PTTL', KEYS[2]))} end
if not codeWrong then return {-4, 0} end
if codeDigest == ARGV[1] then
  codeState = 'uu'
  -- include: code-make
  call('SET', KEYS[1], codeRecord, 'KEEPTTL')
  local trustedKey, trustedFor, guardWindow = KEYS[3], ARGV[4], ARGV[5]
  -- include: trust-mark
end
local failed, limit = codeWrong + 1, tonumber(ARGV[2])
codeState = failed < limit and string.format('%02d', failed) or 'xx'
-- include: code-make
call('SET', KEYS[1], codeRecord, 'KEEPTTL')
if failed < limit then return {0, limit - failed} end
local left = math.max(0, call('PTTL', KEYS[2]))
if ARGV[7] == 'code' then return {-3, left} end
local hold = math.max(tonumber(ARGV[3]), left)
call('SET', KEYS[2], 'locked', 'PX', string.format('%d', hold))
return {-1, hold}
