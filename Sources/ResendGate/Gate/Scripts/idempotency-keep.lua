-- reads: allowed, lifetime, lifetimeText, wait, waitText
-- sets: keepFor
-- A part, included as text (`-- include: idempotency-keep`) where an idempotency record is
-- written: reserve.lua's idempotency-record and idempotency-put.lua (a cluster's step).
-- How long the record of an answer stays: an allowed send's for the whole `lifetime`
-- (`GateConfiguration.idempotencyLifetime`); a denial for its wait, at most a minute (a
-- retry after a lost answer comes within seconds): denials cost nothing else, so fresh
-- keys on denied requests must not fill Redis.
-- Reads `allowed`, `wait` and `waitText` (the answer's wait in ms, as a number and as
-- text), `lifetime` and `lifetimeText`; declares `keepFor`, the ms as the text PX takes.
local keepFor = lifetimeText
if not allowed then
  keepFor = (wait >= 1 and wait <= 60000 and wait <= lifetime) and waitText
    or string.format('%d', math.max(1, math.min(lifetime, wait, 60000)))
end
