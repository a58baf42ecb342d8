-- reads: ipKeep, ipMax, ipWindow, now, observedText, wait, watchIP
-- sets: ipCount, ipFull, observedText, reason, wait
-- The per-IP cap's check in the reserve script (reserve.lua): the IP's set (KEYS[3])
-- refuses at the cap until its oldest send in the window leaves, or is observed; on a
-- cluster the cap was a step of its own, whose wait comes as ARGV[4]. Declares `ipCount`
-- and `ipFull` for ip-hold.lua and ip-count.lua.
-- The IP's sends: stale ones (or older than this purpose's window) matter only at the cap:
-- then sends older than the longest IP window of any purpose (`ipKeep`) go, and this
-- purpose counts those within its own window.
local ipCount, ipFull = 0, false
if ipMax > 0 then
  ipCount = call('ZCARD', KEYS[3])
  if ipCount + 1 >= ipMax then
    call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ipKeep)
    ipCount = call('ZCOUNT', KEYS[3], '(' .. (now - ipWindow), '+inf')
    if ipCount >= ipMax then
      local first = call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
      local f = first[2] + ipWindow - now
      ipFull = true
      if watchIP then
        observedText = observedText == '' and 'ip_limit' or observedText .. ',ip_limit'
      elseif f > wait then
        reason, wait = 'ip_limit', f
      end
    end
  end
end
if ARGV[4] then
  local outside = ARGV[4] + 0
  if outside > wait then reason, wait = 'ip_limit', outside end
end
