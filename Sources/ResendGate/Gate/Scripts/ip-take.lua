-- KEYS: the IP's sends. ARGV: cap, window ms, member (the send's nonce, unique to it),
-- the longest IP window of any purpose in ms (the set is shared by every purpose that
-- caps IPs: it is trimmed and kept by that window, and counted by this purpose's own),
-- now: Redis's clock in ms as the gate's connection reckons it ('' or none: TIME).
-- Takes a share of the IP's cap before the number is decided: {1, ms until the IP may
-- send again once this share counts (0 while it is under its cap)} or {0, wait ms}.
local nowText, now = clock(ARGV[5])
local cap, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local keep = math.max(window, tonumber(ARGV[4]))
call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
local since = '(' .. (now - window)
local count = call('ZCOUNT', KEYS[1], since, '+inf')
if count >= cap then
  local oldest = call('ZRANGEBYSCORE', KEYS[1], since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return {0, tonumber(oldest[2]) + window - now}
end
call('ZADD', KEYS[1], nowText, ARGV[3])
if call('PTTL', KEYS[1]) < keep then call('PEXPIRE', KEYS[1], keep) end
if count + 1 < cap then return {1, 0} end
local oldest = call('ZRANGEBYSCORE', KEYS[1], since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
return {1, tonumber(oldest[2]) + window - now}
