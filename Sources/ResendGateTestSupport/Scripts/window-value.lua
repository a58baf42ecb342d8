-- What window-split.lua makes of a window key's value (a test holds it to `WindowValue`):
-- ARGV 1 the value. Returns {its sends, then 1 and its own cooldown's value, or 0 and ''}.
local list = ARGV[1]
-- include: window-split
return {string.sub(list, 1, sendsEnd), own and 1 or 0, own or ''}
