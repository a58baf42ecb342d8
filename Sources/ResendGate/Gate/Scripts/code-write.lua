-- reads: codeKey, codeLifeText, codeText, codeWrite
-- sets: (none)
-- The issued code's write for an allowed send (code-issue.lua decided it): the key lives
-- as long as the code, so at most one code per number and purpose is ever kept.
if codeWrite then call('SET', codeKey, codeText, 'PX', codeLifeText) end
