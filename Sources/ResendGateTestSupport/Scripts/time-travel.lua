-- Moves the gate's state in a test's own Redis ARGV[2] ms into the past, which to the gate's
-- scripts is the same as that much time passing (RedisTestClient.advanceTime): every key
-- matching ARGV[1]. Returns how many keys it changed.
local by, changed = tonumber(ARGV[2]), 0
-- A cooldown's value (prelude.lua's layout) with its deadline moved back.
local function shifted(value)
  local deadline = string.sub(value, 1, 6) ~= 'locked' and cooldownDeadline(value)
  if not deadline or #value < 28 then return value end
  local token, deadline = cooldownNonce(value), deadline - by
  -- include: cooldown-make
  return cooldown .. string.sub(value, 29)
end
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do
  if redis.call('TYPE', key).ok == 'zset' then
    local all = redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES')
    for i = 1, #all, 2 do
      redis.call('ZADD', key, string.format('%.0f', tonumber(all[i + 1]) - by), all[i])
    end
  elseif string.sub(key, -7) == ':window' then
    local list, moved = redis.call('GET', key), {}
    -- include: window-split
    for at = 1, sendsEnd - 28, 29 do
      moved[#moved + 1] = string.format('%013.0f', tonumber(string.sub(list, at, at + 12)) - by)
        .. string.sub(list, at + 13, at + 28)
    end
    if own then moved[#moved + 1] = ';' .. shifted(own) end
    redis.call('SET', key, table.concat(moved), 'KEEPTTL')
  elseif string.sub(key, -9) == ':cooldown' then
    local value = redis.call('GET', key)
    local moved = shifted(value)
    if moved ~= value then redis.call('SET', key, moved, 'KEEPTTL') end
  elseif string.sub(key, -5) == ':code' then
    -- An issued code's record (code-issue.lua): its expiry, after its identity, moves back.
    local value = redis.call('GET', key)
    local expiry = tonumber(string.sub(value, 17, 28), 16)
    if expiry then
      redis.call('SET', key, string.sub(value, 1, 16) .. string.format('%012x', expiry - by) .. string.sub(value, 29), 'KEEPTTL')
    end
  elseif redis.call('TYPE', key).ok == 'hash' then
    local all = redis.call('HGETALL', key)
    for i = 1, #all, 2 do
      local kind, at = string.match(all[i], '^(%a):(%-?%d+)$')
      if kind then
        redis.call('HDEL', key, all[i])
        redis.call('HINCRBY', key, kind .. ':' .. string.format('%.0f', tonumber(at) - by), all[i + 1])
      end
    end
  end
  local left = redis.call('PTTL', key)
  if left > 0 then
    if left <= by then redis.call('DEL', key) else redis.call('PEXPIRE', key, tostring(left - by)) end
  end
  changed = changed + 1
end
return changed

