-- reads: ipFull, ipKeep, ipKeepText, ipMax, ipMember, nowText, token
-- sets: (none)
-- The per-IP cap's write for an allowed send (reserve.lua): the send joins the IP's set.
-- An observed cap that is full counts nothing more: the set stays bounded by the cap.
if ipMax > 0 and not ipFull then
  call('ZADD', KEYS[3], nowText, ipMember or token)
  -- The set outlives its newest send by the longest IP window, plus at most an eighth
  -- of it: its expiry is renewed only when less than that is left (never shortened).
  if call('PTTL', KEYS[3]) < ipKeep then call('PEXPIRE', KEYS[3], ipKeepText) end
end
