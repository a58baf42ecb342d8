-- reads: guardWindow, now, trustedFor, trustedKey
-- sets: (none)
-- A right code's mark for the SMS-pumping guard, a part of verify.lua and check.lua (each
-- ends with it): with the guard on, the number is marked trusted for `trustedFor` ms (the
-- guard never refuses it then), and {1, 1} says the verification counts toward its
-- prefix's conversion, {1, 0} that it does not: a number counts at most once per guard
-- window (the mark holds the time it last counted, and lives at least a window: the lint
-- refuses a shorter `trusted_for`). Its script declares `trustedKey`, `trustedFor` ('0':
-- the guard is off), `guardWindow` and `now`.
if trustedFor == '0' then return {1, 0} end
local counted = tonumber(call('GET', trustedKey) or '')
if counted and now - counted < tonumber(guardWindow) then
  call('PEXPIRE', trustedKey, trustedFor)
  return {1, 0}
end
call('SET', trustedKey, tostring(now), 'PX', trustedFor)
return {1, 1}
