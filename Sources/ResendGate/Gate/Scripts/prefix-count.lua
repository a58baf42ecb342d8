-- reads: bucket, countKind, key, now, window
-- sets: counted
-- A part, included as text (`-- include: prefix-count`): counts one allowed send (or, with
-- `countKind` 'v:', a verified outcome) in the current bucket of the prefix's hash `key`
-- at `now`, for a guard of `window` and `bucket` ms, and sets `counted` (the includer
-- declares it) to the field. The key outlives its newest bucket by the window: its expiry
-- is set when a bucket starts (its first count), which saves a write on every other count.
counted = countKind .. string.format('%d', now - now % bucket)
if call('HINCRBY', key, counted, '1') == 1 then call('PEXPIRE', key, string.format('%d', window + bucket)) end
