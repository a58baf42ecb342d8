"""deploy/dev/script-cost's caller: PORT SHA KIND COUNT SEED OBSERVED.

Sends COUNT calls of a script (by SHA) to a Redis on 127.0.0.1:PORT, pipelined 16 deep,
every reply read. KIND says which script, called as the gate calls it:
  4 or 6       the every-rule reserve script (with 4 keys, or the 6 of older versions;
               OBSERVED 1 when it takes the observed rules as ARGV[11]): one call in four
               repeats one of the last 256 numbers, client IPs from a pool of 1 024, a
               fresh idempotency record each call;
  policy       the same, as a reserve script with the policy written in (its block as
               the file has it: the every-rule policy) takes it: now, nonce, fingerprint;
  reserve-guarded  the same with the fraud guard inside (since issue 24): also the
               number's trusted mark, its prefix's counts and the shard of the CN budget
               and of the total budget it tries first (one of 8 each);
  budget-take  a share of a country's budget and of the total, 8 shards each, none full
               (on one Redis, one call for both); budget-take-now the same for a script
               that takes Redis's time as its first argument; budget-take-shard, since
               issue 24, a share of one shard of 8 of a country's budget (a cluster's call);
  pumping      the pumping guard's take on one of ten prefixes, none blocked (with the
               time as the 7th argument, which a script that does not take it ignores).
"""
import random
import socket
import time
import sys

port, sha, kind, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
guarded = kind == 'reserve-guarded'
written_policy = kind == 'policy' or guarded
if written_policy: kind = '4'
nkeys = int(kind) if kind.isdigit() else 0
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 1
observed = len(sys.argv) > 6 and sys.argv[6] == '1'
random.seed(seed)
s = socket.create_connection(('127.0.0.1', port))
def resp(args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)
recent = []
def budget_call():
    member = '%016x' % random.getrandbits(64)
    if kind == 'budget-take-shard':
        return resp(['EVALSHA', sha, '1', 'rg:budget:{*:CN:%d}' % random.randint(0, 7),
                     '%d' % int(time.time() * 1000), member, '86400000', '1250000'])
    keys = ['rg:budget:{*:CN:%d}' % i for i in range(8)] + ['rg:budget:{*:total:%d}' % i for i in range(8)]
    args = ['%d' % int(time.time() * 1000), member] if kind == 'budget-take-now' else [member]
    for _ in range(2):
        args += ['8', '86400000', '0'] + ['1250000'] * 8
    return resp(['EVALSHA', sha, str(len(keys))] + keys + args)
def pumping_call():
    prefix = '+86138%d' % random.randint(0, 9)
    return resp(['EVALSHA', sha, '1', 'rg:pump:{default:%s}' % prefix, 'take', '3600000', '360000', '10000000', '50000', '', '%d' % int(time.time() * 1000)])
def call(i):
    if kind in ('budget-take', 'budget-take-now', 'budget-take-shard'): return budget_call()
    if kind == 'pumping': return pumping_call()
    if recent and random.random() < 0.25:
        num = random.choice(recent[-256:])
    else:
        num = '+86138%08d' % random.randint(0, 99999999); recent.append(num)
    ip = '10.%d.%d.%d' % (1, random.randint(0, 3), random.randint(0, 255))
    idem = 'rg:idem:{%040x}' % random.getrandbits(160)
    keys = ['rg:{default:%s}:cooldown' % num, 'rg:{default:%s}:%s' % (num, 'sends' if nkeys == 6 else 'window'),
            'rg:ip:{%s}:sends' % ip, idem]
    if nkeys == 6: keys += ['rg:{default:%s}:no-token' % num, 'rg:{default:%s}:idem' % num]
    nonce = '%016x' % random.getrandbits(64)
    if written_policy:
        now = '%d' % int(time.time() * 1000)
        # The nonce alone, which the script also counts the IP's and the budgets' sends under
        # (the gate adds a member of their own for each, a substring taken apiece).
        if guarded:
            keys += ['rg:{default:%s}:trusted' % num, 'rg:pump:{default:%s}' % num[:7],
                     'rg:budget:{*:CN:%d}' % random.randint(0, 7), 'rg:budget:{*:total:%d}' % random.randint(0, 7)]
        return resp(['EVALSHA', sha, str(len(keys))] + keys + [now, nonce, '%s|default|%s' % (num, ip)])
    args = ['86400000', '5', '100000', '3600000', '%s|default|%s' % (num, ip), '86400000', nonce, idem, '3600000', '0']
    args += ([''] if observed else []) + ['60000', '120000', '300000']
    return resp(['EVALSHA', sha, str(nkeys)] + keys + args)
buf = b''
def drain(k):
    global buf
    got = 0
    while got < k:
        data = s.recv(65536)
        if not data: raise SystemExit('closed')
        buf += data
        # count top-level replies: each reply to EVALSHA is one RESP value (an array, a bulk string, or a '-' error)
        while True:
            r = parse(buf)
            if r is None: break
            buf = buf[r:]; got += 1
def parse(b, i=0):
    if i >= len(b): return None
    t = b[i:i+1]; e = b.find(b'\r\n', i)
    if e < 0: return None
    if t in (b'+', b'-', b':'):
        if t == b'-': sys.stderr.write(b[i:e].decode() + '\n')
        return e + 2
    if t == b'$':
        l = int(b[i+1:e])
        if l < 0: return e + 2
        end = e + 2 + l + 2
        return end if end <= len(b) else None
    if t == b'*':
        c = int(b[i+1:e]); j = e + 2
        if c < 0: return j
        for _ in range(c):
            j = parse(b, j)
            if j is None: return None
        return j
    raise SystemExit('bad reply %r' % b[i:i+20])
i = 0
while i < n:
    k = min(16, n - i)
    s.sendall(b''.join(call(i + j) for j in range(k)))
    drain(k)
    i += k
