-- The decision of a policy other than the default one, one copy per policy: `ReserveScripts`
-- writes the policy's constants into the block below (between its marker lines), since each
-- argument of a call costs Redis about as much as a small command; and a copy without the
-- IP cap for requests without a client address and for a cluster (where the cap is a step
-- of its own). As written here, the block is the every-rule policy deploy/dev/bench measures
-- (ladder 60 s, 120 s, 300 s; 5 sends a day; 100 000 sends an hour from an IP).
--
-- KEYS: 1 cooldown (written here only by a policy without a window; else read: it may
--       hold a lock, see verify.lua, or a cooldown begun under a plain policy),
--       2 window (a string: the sends in the policy's window, oldest first, 29 characters
--       each: the send's time in 13 digits of ms, then its nonce; then ';' and the
--       running cooldown, the window's own), 3 the IP's sends
--       (sorted set: one member per send, scored by its time; a key of the
--       number's slot when the IP is not capped in this call), 4 idempotency record (a key
--       of the number's slot when the request has no Idempotency-Key). On a cluster only
--       KEYS 1 and 2 (the IP's cap and the record are steps of their own; a key never
--       written would make Redis answer TRYAGAIN while the slot migrates).
-- ARGV: 1 now, Redis's clock in ms as the gate's connection reckons it ('': the script
--       asks Redis's TIME), 2 fresh nonce (16 characters), then, when the IP is capped, the
--       IP's member (a nonce of its own, so the IP's set cannot be joined to the number's
--       keys), 3 idempotency fingerprint ('' : none); on a
--       cluster also 4 a wait decided outside this slot (the per-IP cap; '0': none) and
--       5 the idempotency record's key name to link ('' : none). On one Redis the record
--       to link is KEYS[4]. For a purpose that issues codes, the last key is the number's
--       code and the last argument the new code's identity, digest and seal (code-issue.lua).
-- Returns the answer as one string, the idempotency record's format: "allowed reason wait
-- sends next now nonce observed" (for a purpose that issues codes, an allowed send's nonce
-- is followed by '#' and its code's record: code-issue.lua), then, when the request has an Idempotency-Key, a space
-- and its fingerprint (reason '' for an allowed send; nonce: an allowed send's own, a
-- refusal's running cooldown's, or ''; observed: the observed rules that would have
-- refused, comma-separated). Or {record}: the text of an idempotency record already
-- stored under KEYS[4], which the gate replays when it holds this request's fingerprint
-- (and answers 422 when it does not: `ReserveAnswer`). With budgets or the pumping guard
-- (fraud-guard.lua): {their refusal...}, or {answer, 1} when the prefix is due in the
-- registry of blocked prefixes.
--
-- Observe mode: a rule the policy observes that would refuse does not; its reason goes
-- into the observed list and the other rules decide. Such a send starts a new cooldown (a
-- new nonce), counts in the window, and is not added to a full IP's set (the set stays
-- bounded by the cap). A lock always refuses (the gate refuses `locked` in observe mode).
--
-- A cooldown's value: the send's nonce, its deadline in 12 hex digits of ms (`CooldownValue`),
-- then, when an idempotency record answered the send, a space and the record's key name (a
-- refund voids it). A policy with a window keeps it in the window key, after the sends and
-- a ';' (no key of its own); else, and for a gate's first seconds (`cooldownInWindow` false,
-- until every plain-policy gate reads windows: `WindowCooldowns`), in the cooldown key.
--
-- Every rule is read and the answer decided before anything is written: a denied request
-- consumes nothing. The wait is the longest of every limit that binds the next send, the
-- reason the one that ends last. An allowed send's cooldown lasts its real wait (its ladder
-- step, or until the oldest send leaves the window when it filled `max sends`), so peek
-- and tokens show it; the answer's wait also covers the IP's cap when this send filled it.
--
-- The idempotency record (KEYS[4]) is the answer, a space and the fingerprint
-- (idempotency-put.lua writes the same on a cluster; `ReserveAnswer` reads it). It is
-- written first, `SET … NX GET`: a record already there is a replay (or another request's
-- key), and nothing else is written.
--
-- Cost (deploy/capacity.md says why each choice): a command, an argument, a reply field
-- or a write costs Redis more than the Lua around them. So the window is one string read
-- and written whole and holds the cooldown, read with the cooldown key in one MGET; a
-- cooldown's value holds its deadline (no PTTL) and the idempotency link; the record's
-- check is its write; a new number skips the window's parsing; the answer, the record and
-- the window are each made in one concatenation; numbers go to Redis as text.
-- The window keeps the last `max(max sends, ladder steps, 16)` sends, all any rule reads.

-- policy (ReserveScripts writes this block for each purpose)
local lifetime, lifetimeText = 86400000, '86400000'
local window, windowLifeText, keepSends = 86400000, '86400000', 16
local cooldownInWindow, longest, steps = true, 86400000, 3
local watchCooldown = false
local function step(i) return (select(i, '60000', '120000', '300000')) end
local firstHold, firstHoldMs, secondHold = '60000', 60000, '120000'
local maxSends, watchMax = 5, false
local ipMax, ipWindow, ipKeep, ipKeepText, watchIP = 100000, 3600000, 3600000, '4050000', false
local guardRegister
-- end of policy

local nowText, now = clock(ARGV[1])
-- The observed rules that would have refused this send, comma-separated.
local observedText = ''
-- The cooldown key's value and the window, in one read.
local held = call('MGET', KEYS[1], KEYS[2])
local list = held[2]
-- include: window-read
local reason, wait = '', 0
-- The rules' checks (`NumberRule`, in `ReserveScripts.numberRules`' order): the cooldown, max sends,
-- the IP's cap; the budgets and SMS-pumping guard (in a policy with either on one Redis),
-- which refuse whatever the number's rules say.
-- rules: check
-- An allowed send's hold, as the text PX takes (`hold`, most often a ladder step as it
-- came) and in ms (`holdMs`); its code (a purpose that issues codes: `codeText`, carried
-- after the nonce and a '#' in the answer; `codeWrite`: it is new, to store).
local allowed, token, hold, holdMs, ipMember = reason == '', '', nil, 0, nil
local codeText, codeWrite = '', false
if allowed then
  token = ARGV[2]
  -- The IP's member, when the gate gave one, follows the nonce: a nonce of its own.
  if #token > 16 then token, ipMember = string.sub(token, 1, 16), string.sub(token, 17, 32) end
  -- rules: hold
  wait = holdMs
  -- rules: answer
elseif locked then
  -- Wrong codes locked the number (verify.lua): the lock is the reason, whatever else
  -- refuses, and the wait at least the lock's.
  reason, wait = 'locked', math.max(wait, remaining)
elseif value and reason ~= 'ip_limit' then
  -- The running cooldown's nonce: its value's first 16 characters.
  token = cooldownNonce(value)
end
-- The answer as one string (one field of a reply costs Redis about as much as a small
-- command), the idempotency record's format. Numbers become text without Lua's own
-- conversion (a printf of a float, as costly as a command): the allowed wait is most
-- often the ladder step as it came.
-- Built in one concatenation (each makes a string Lua hashes and later collects).
local waitText = (allowed and wait == holdMs) and hold or string.format('%d', wait)
local sendsText, nextText
if sends == 1 then
  sendsText, nextText = '1', secondHold
else
  sendsText = sends < 10 and string.sub('0123456789', sends + 1, sends + 1) or string.format('%d', sends)
  nextText = step(sends < steps and sends + 1 or steps)
end
-- The record is the answer, then a space and the fingerprint (it may hold spaces).
local fingerprint = ARGV[3]
local answer = (allowed and '1 ' or '0 ') .. reason .. ' ' .. waitText .. ' ' .. sendsText .. ' '
  .. nextText .. ' ' .. nowText .. ' ' .. token .. (codeText == '' and '' or '#' .. codeText) .. ' ' .. observedText
  .. (fingerprint == '' and '' or ' ') .. fingerprint
-- include: idempotency-record
if allowed then
  -- rules: write
elseif repair then
  call('PEXPIRE', KEYS[1], string.format('%d', remaining))
end
if guardRegister then return {answer, 1} end
return answer
