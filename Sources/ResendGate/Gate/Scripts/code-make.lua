-- reads: codeExpiry, codeIdentity, codeState, codeTail
-- sets: codeRecord
-- A part, included as text (`-- include: code-make`) where an issued code's record is written
-- (code-issue.lua: a new code; check.lua and release.lua: a new state): the layout
-- code-split.lua reads (and `CodeRecord` in Swift), from `codeIdentity`, `codeExpiry` (ms),
-- `codeState` (2 characters) and `codeTail` (digest, secret's identifier, sealed code).
codeRecord = codeIdentity .. string.format('%012x', codeExpiry) .. codeState .. codeTail
