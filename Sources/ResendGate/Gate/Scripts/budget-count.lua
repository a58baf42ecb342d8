-- reads: member, nowText, room, window
-- sets: (none)
-- A part, included as text (`-- include: budget-count`): counts the send `member` in the
-- shard `room` of a budget whose window is `window` ms, at `nowText` (budget-room.lua
-- chose the shard). The shard outlives its newest send by the window, plus at most an
-- eighth of it: its expiry is renewed only when less than the window is left (a read most
-- sends, not a write).
call('ZADD', room, nowText, member)
if call('PTTL', room) < window then call('PEXPIRE', room, string.format('%d', window + window / 8)) end
