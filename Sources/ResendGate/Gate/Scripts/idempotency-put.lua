-- KEYS: idempotency record. ARGV: fingerprint, lifetime ms, then the answer's
-- fields. Keeps the first answer stored.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'a', ARGV[3], 'r', ARGV[4], 'ms', ARGV[5], 's', ARGV[6],
  'n', ARGV[7], 't', ARGV[8], 'tok', ARGV[9])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
