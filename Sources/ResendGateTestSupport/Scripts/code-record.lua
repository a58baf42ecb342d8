-- What code-split.lua reads of an issued code's record and code-make.lua makes (a test
-- holds both to `CodeRecord`): ARGV 1 a record to read, then what to make one of: 2 an
-- identity, 3 an expiry in ms, 4 a state, 5 a tail. Returns {identity, expiry, state,
-- wrong checks or -1, digest, secret's identifier, tail, the record made}.
local codeRecord = ARGV[1]
-- include: code-split
local read = {codeIdentity, codeExpiry, codeState, codeWrong or -1, codeDigest, codeKeyID, codeTail}
do
  local codeIdentity, codeExpiry, codeState, codeTail = ARGV[2], ARGV[3] + 0, ARGV[4], ARGV[5]
  -- include: code-make
end
read[8] = codeRecord
return read
