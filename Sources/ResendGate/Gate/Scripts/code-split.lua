-- reads: codeRecord
-- sets: codeDigest, codeExpiry, codeIdentity, codeKeyID, codeState, codeTail, codeWrong
-- A part, included as text (`-- include: code-split`) by every script that reads a number's
-- issued code (code-issue.lua, check, countdown-of-code, release): the one place Lua reads
-- the record `CodeRecord` reads in Swift (`CodeRecordLayoutTests` holds the two to each
-- other on generated records). code-make.lua writes it.
-- The record: the code's identity (a nonce of its own, 16 characters), its expiry in 12 hex
-- digits of ms, its state in 2 characters (wrong checks so far, '00' to '99'; 'uu' used,
-- 'vv' voided by a refund, 'xx' locked by wrong checks), then its tail: the digest checks
-- compare (16 characters), the code secret's identifier (4) and the sealed code.
-- Reads `codeRecord` (the key's value, not nil); declares `codeIdentity`, `codeExpiry` (ms;
-- 0 when unreadable), `codeState`, `codeWrong` (the wrong checks as a number; nil when the
-- code is used, voided or locked), `codeDigest`, `codeKeyID` and `codeTail`.
local codeIdentity, codeExpiry = string.sub(codeRecord, 1, 16), tonumber(string.sub(codeRecord, 17, 28), 16) or 0
local codeState, codeTail = string.sub(codeRecord, 29, 30), string.sub(codeRecord, 31)
local codeWrong, codeDigest, codeKeyID = tonumber(codeState), string.sub(codeTail, 1, 16), string.sub(codeTail, 17, 20)
