"""deploy/script-cost's caller: PORT SHA KEYS COUNT SEED OBSERVED.

Sends COUNT calls of the every-rule reserve script (by SHA, KEYS 4 or 6, OBSERVED 1 when the
script takes the observed rules as ARGV[11]) to a Redis on 127.0.0.1:PORT, as the every-rule
gate does: one call in four repeats one of the last 256 numbers, client IPs from a pool of
1 024, a fresh idempotency record each call; pipelined 16 deep, every reply read.
"""
import random
import socket
import sys

port, sha, nkeys, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
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
def call(i):
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
        # count top-level replies crudely: each reply to EVALSHA is an array starting with '*' or '-' error
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
