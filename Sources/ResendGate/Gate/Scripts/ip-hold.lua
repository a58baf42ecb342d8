-- reads: ipCount, ipMax, ipWindow, now, wait, watchIP
-- sets: wait
-- The per-IP cap's part of an allowed send (reserve.lua): the answer's wait covers the
-- IP's too when this send fills its cap.
-- The send that fills the IP's cap: the next one from the IP waits for it too (unless
-- the cap is only observed).
if ipMax > 0 and ipCount + 1 >= ipMax and not watchIP then
  local f = ipWindow
  if ipCount > 0 then
    local first = call('ZRANGEBYSCORE', KEYS[3], '(' .. (now - ipWindow), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
    f = first[2] + ipWindow - now
  end
  if f > wait then wait = f end
end
