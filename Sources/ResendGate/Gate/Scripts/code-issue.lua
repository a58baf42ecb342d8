-- reads: allowed, codeArg, codeKey, codeLife, codeSame, now
-- sets: codeText, codeWrite
-- The issued code of an allowed send (`IssuedCodes`), a part of reserve.lua put in only
-- for a purpose that issues codes, after the send is decided and before its answer is made.
-- Its script declares `codeKey` (the number's code key), `codeArg` (the gate's new code: its
-- identity, a nonce of its own, then its digest and its seal: `CodeRecord`),
-- `codeLife`/`codeLifeText` (the code's lifetime in ms) and `codeSame` (a resend sends the
-- live code again), and `allowed` and `now`. Sets `codeText`, the code's record as the key
-- keeps it and the answer carries it, and `codeWrite` (code-write.lua stores it).
--
-- The record (`CodeRecord` reads it, and writes the same for the default policy's plain
-- send, `IssuedCodeRule.store`; a test holds the two paths to each other): its identity (a nonce of its own, 16 characters),
-- its expiry in 12 hex digits of ms, its state in 2 characters (wrong checks so far,
-- '00' to '99'; 'uu' used, 'vv' voided by a refund, 'xx' locked by wrong checks), the
-- digest checks compare (16 characters), the code secret's identifier (4), then the sealed
-- code. A live code is one whose state is a count, whose expiry is a tenth of its lifetime
-- ahead or more (a minute, for 10: time to type it; a code about to expire is not sent again)
-- and whose secret is the gate's (one sealed under a secret since changed could not be
-- sent): with `codeSame`,
-- an allowed send answers it again (same identity, expiry and count); else, or with none
-- live, the gate's new one.
if allowed then
  local held = codeSame and call('GET', codeKey)
  if held and tonumber(string.sub(held, 29, 30)) and (tonumber(string.sub(held, 17, 28), 16) or 0) > now + codeLife / 10
    and string.sub(held, 47, 50) == string.sub(codeArg, 33, 36) then
    codeText = held
  else
    codeText = string.sub(codeArg, 1, 16) .. string.format('%012x', now + codeLife) .. '00' .. string.sub(codeArg, 17)
    codeWrite = true
  end
end
