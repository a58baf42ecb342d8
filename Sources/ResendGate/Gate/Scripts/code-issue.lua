-- reads: codeArg, codeKey, codeLife, codeSame, now
-- sets: codeText, codeWrite
-- The issued code of an allowed send (`IssuedCodes`), a part of reserve.lua put in only
-- for a purpose that issues codes, in an allowed send's `answer` slot, before its answer is made.
-- Its script declares `codeKey` (the number's code key), `codeArg` (the gate's new code: its
-- identity, a nonce of its own, then its digest and its seal: `CodeRecord`),
-- `codeLife`/`codeLifeText` (the code's lifetime in ms) and `codeSame` (a resend sends the
-- live code again) and `now`. Sets `codeText`, the code's record as the key
-- keeps it and the answer carries it, and `codeWrite` (code-write.lua stores it).
--
-- The record's layout is code-split.lua's (read) and code-make.lua's (made); `CodeRecord`
-- reads it in Swift and writes the same for the default policy's plain send
-- (`IssuedCodeRule.store`; a test holds the two paths to each other). The argument is the
-- new code's identity, then a record's tail (digest, secret's identifier, sealed code).
-- A live code is one whose state is a count, whose expiry is a tenth of its lifetime
-- ahead or more (a minute, for 10: time to type it; a code about to expire is not sent again)
-- and whose secret is the gate's (one sealed under a secret since changed could not be
-- sent): with `codeSame`, an allowed send answers it again (same identity, expiry and
-- count); else, or with none live, the gate's new one.
local codeRecord = codeSame and call('GET', codeKey)
local live = false
if codeRecord then
  -- include: code-split
  live = codeWrong and codeExpiry > now + codeLife / 10 and codeKeyID == string.sub(codeArg, 33, 36)
end
if live then
  codeText = codeRecord
else
  local codeIdentity, codeExpiry, codeState, codeTail = string.sub(codeArg, 1, 16), now + codeLife, '00', string.sub(codeArg, 17)
  -- include: code-make
  codeText, codeWrite = codeRecord, true
end
