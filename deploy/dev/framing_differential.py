#!/usr/bin/env python3
"""Differential test of the server's HTTP/1.1 framing against h11 (a reference parser).

Generates inputs of 1-3 pipelined requests (Content-Length and chunked bodies, trailers,
odd spacing, bare LF line ends, duplicate fields, bodies on methods that have none, and
random byte mutations of all that), writes each on a fresh connection to a running
`resendgate serve`, half-closes, and reads every answer until the server closes. The
same bytes go through h11 as a server would feed them. Each request targets a path of its
own (`/diff/<case>-<n>`), which the gate's 404 answer names, so the answers tell where
the server took each request to begin and end.

A difference fails the run when:
  - the server answers a request that h11 refused or never saw whole (the direction a
    smuggled request takes);
  - the two read different requests (targets) at the same place in the pipeline;
  - the server answers fewer of the whole requests than h11 accepted, with no refusal or
    close that explains it (a dropped request);
  - the server refuses a generated (unmutated) request that has none of the stricter
    rules below.

Known, legitimate differences, counted and printed (--show N prints examples):
  - nothing after a chunked request, a refusal, an HTTP/1.0 request or `Connection:
    close` is compared: the server closes after the first two, and h11 after the last
    two (it has no HTTP/1.0 keep-alive, which the server has);
  - the server is stricter (400 and close, never a smuggling risk): a repeated Host,
    Authorization, Content-Type or Content-Length (even with one value), a body on TRACE,
    CONNECT or an unknown method (a mutated method name often makes one), Transfer-Encoding
    on HTTP/1.0, a folded header line (obs-fold), an HTTP version other than 1.0 and 1.1,
    a chunk size over 16 hex digits, a chunk size or trailer line over 1 KiB. Any refusal
    of a mutated input is counted as this kind rather than failed: it cannot be told from
    these by its bytes alone;
  - the server is looser: empty lines before a request line are skipped (RFC 9112 §2.2
    allows it; h11 refuses them), a byte 0x80-0xFF in a request target is taken (the
    router answers 404), and an HTTP/1.1 request without Host is served (RFC 9112 §3.2
    says 400; h11 refuses it).
"""

import argparse
import json
import random
import re
import socket
import sys
import time

import h11

REFUSALS = {400, 413, 431}

# Tags of what makes the server refuse where h11 accepts (see the docstring).
STRICTER = {"dup-host", "dup-auth", "dup-ctype", "dup-length", "body-on-bodyless", "te-http10", "obs-fold"}
# Tags of what makes the server accept where h11 refuses.
LOOSER = {"leading-blank"}

METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]
# No HEAD: its answer names a length it does not carry, which this reader cannot frame without
# trusting the boundaries under test.
BODYLESS = ["TRACE", "CONNECT", "FROB"]


class Request:
    """One generated request: its bytes, its target, and tags naming what it holds."""

    def __init__(self, data, target, tags):
        self.data = data
        self.target = target
        self.tags = tags


def chunked_body(rng, body, tags):
    out = b""
    at = 0
    while at < len(body):
        size = rng.randint(1, max(1, len(body) - at))
        digits = format(size, rng.choice(["x", "X"]))
        if rng.random() < 0.1:
            digits = "0" * rng.randint(1, 3) + digits
        ext = ";name=value" if rng.random() < 0.15 else ""
        out += (digits + ext).encode() + b"\r\n" + body[at : at + size] + b"\r\n"
        at += size
    out += b"0\r\n"
    roll = rng.random()
    if roll < 0.2:
        out += b"X-Checksum: abc\r\n"
        tags.add("trailer")
    elif roll < 0.27:
        # A request head where trailer lines belong: both must refuse it.
        out += b"GET /diff/smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        tags.add("trailer-request-line")
    elif roll < 0.3:
        out += b" folded\r\n"
        tags.add("trailer-fold")
    out += b"\r\n"
    return out


def generate_request(rng, case, index, eol):
    tags = set()
    target = "/diff/%d-%d" % (case, index)
    http10 = rng.random() < 0.1
    if rng.random() < 0.08:
        method = rng.choice(BODYLESS)
    else:
        method = rng.choice(METHODS)
    if method == "CONNECT":
        target = "127.0.0.1:%d" % (1000 + case % 60000)
    version = "HTTP/1.0" if http10 else "HTTP/1.1"
    lines = ["%s %s %s" % (method, target, version)]
    lines.append("Host: 127.0.0.1")
    body = bytes(rng.choice(b"abcdef{}\":, ") for _ in range(rng.choice([0, 0, 1, 5, 17, 300])))
    framing = rng.choice(["none", "length", "length", "chunked"]) if body else rng.choice(["none", "none", "length0"])
    if framing == "length0":
        framing = "length"
    colon = rng.choice([": ", ":", ":  ", ":\t", ": "])
    if framing == "length":
        trailing = rng.choice(["", "", " ", "\t"])
        lines.append("Content-Length%s%d%s" % (colon, len(body), trailing))
        if rng.random() < 0.03:
            lines.append("Content-Length: %d" % len(body))
            tags.add("dup-length")
    elif framing == "chunked":
        lines.append("Transfer-Encoding%schunked" % colon)
        if http10:
            tags.add("te-http10")
    if rng.random() < 0.03:
        lines.append("Host: 127.0.0.1")
        tags.add("dup-host")
    if rng.random() < 0.03:
        lines.append("Authorization: Bearer a")
        lines.append("Authorization: Bearer b")
        tags.add("dup-auth")
    if rng.random() < 0.3:
        lines.append("Content-Type: application/json")
        if rng.random() < 0.1:
            lines.append("Content-Type: text/plain")
            tags.add("dup-ctype")
    if http10 and rng.random() < 0.5:
        lines.append("Connection: keep-alive")
    elif rng.random() < 0.05:
        lines.append("Connection: close")
        tags.add("close")
    if rng.random() < 0.03:
        lines.append("X-Folded: a")
        lines.append(" b")
        tags.add("obs-fold")
    if rng.random() < 0.1:
        lines.append("X-Odd%s  spaced value\t" % colon)
    if method in BODYLESS and framing != "none" and (body or framing == "chunked"):
        tags.add("body-on-bodyless")
    head = eol.join(lines).encode() + eol.encode() * 2
    if framing == "chunked":
        data = head + chunked_body(rng, body, tags)
    elif framing == "length":
        data = head + body
    else:
        data = head
    return Request(data, target, tags)


def generate(rng, case):
    count = rng.choice([1, 2, 2, 3, 3])
    eol = "\n" if rng.random() < 0.05 else "\r\n"
    requests = [generate_request(rng, case, i, eol) for i in range(count)]
    data = b"".join(r.data for r in requests)
    if rng.random() < 0.05:
        data = b"\r\n" + data
        requests[0].tags.add("leading-blank")
    mutated = False
    if rng.random() < 0.25:
        data = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.4:
                data[at] = rng.choice(b" \t\r\n:;0123456789abcdefABCDEF\x00\x7f\x80GET/")
            elif kind < 0.7:
                del data[at]
            else:
                data.insert(at, rng.choice(b" \t\r\n:0aF"))
        data = bytes(data)
        mutated = True
    return requests, data, mutated


def reference(data):
    """What h11 reads: the whole requests as (target, event), and why it refused what
    followed (None when it refused nothing: the input ended, perhaps inside a request)."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
    conn.receive_data(data)
    conn.receive_data(b"")
    seen = []
    current = None
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED or isinstance(event, h11.ConnectionClosed):
                return seen, None
            if isinstance(event, h11.Request):
                current = event
            elif isinstance(event, h11.EndOfMessage):
                seen.append((current.target.decode("latin-1"), current))
                conn.send(h11.Response(status_code=404, headers=[("Content-Length", "0")]))
                conn.send(h11.EndOfMessage())
                if conn.our_state is h11.MUST_CLOSE:
                    return seen, None
                conn.start_next_cycle()
    except h11.RemoteProtocolError as error:
        message = str(error)
        if "without sending complete message" in message or "incomplete" in message:
            return seen, None  # the input ended inside a message: not a refusal
        return seen, message or "refused"


def read_answers(port, data, timeout):
    """The server's answers to `data`: a list of (status, body text, head text)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            except socket.timeout:
                return None
            if not chunk:
                break
            received += chunk
        else:
            return None
    answers = []
    while received:
        end = received.find(b"\r\n\r\n")
        if end < 0:
            raise ValueError("an answer head without its end: %r" % received[:200])
        head = received[:end].decode("latin-1")
        status = int(head.split(" ", 2)[1])
        length = re.search(r"(?im)^content-length: *(\d+)", head)
        size = int(length.group(1)) if length else 0
        if head.startswith("HTTP/1.1 100 "):
            size = 0
        body = received[end + 4 : end + 4 + size]
        received = received[end + 4 + size :]
        if status == 100:
            continue
        answers.append((status, body.decode("latin-1"), head))
    return answers


def names(body, target):
    """Whether the gate's 404 answer names `target` (its path, as the router saw it)."""
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return False
    path = target.split("?", 1)[0]
    return message == "no route for " + path[:200]


def ends_connection(event):
    """After this request nothing is compared: the server closes after a chunked request,
    and h11 after an HTTP/1.0 one (it has no HTTP/1.0 keep-alive) or `Connection: close`."""
    if event.http_version == b"1.0":
        return True
    for name, value in event.headers:
        if name == b"transfer-encoding" or (name == b"connection" and b"close" in value.lower()):
            return True
    return False


def compare(requests, data, mutated, answers):
    """(None, None) when the two agree, (None, note) when they differ only as the
    docstring explains, (why, None) otherwise."""
    seen, refused = reference(data)
    for i, (status, body, head) in enumerate(answers):
        # What the generator put into this request (the one at this place, unmutated).
        tags = requests[i].tags if i < len(requests) else set()
        server_refused = status in REFUSALS and '"not_found"' not in body
        if i < len(seen):
            target, event = seen[i]
            if server_refused:
                if tags & STRICTER or mutated:
                    return None, "stricter: " + cause(tags & STRICTER, mutated)
                return "the server refused request %d (%d %s) that h11 accepted" % (i, status, body), None
            if not names(body, target):
                return "request %d: the server answered %d %s where h11 read target %r" % (i, status, body[:160], target), None
            if ends_connection(event):
                return None, None
            continue
        # h11 saw no whole request here: it refused it, or the input ended inside it.
        if server_refused:
            if refused:
                return None, None  # both refuse it
            if tags & STRICTER or mutated:
                return None, "stricter: " + cause(tags & STRICTER, mutated)
            return "the server refused request %d (%d %s) that h11 saw incomplete" % (i, status, body), None
        if refused and "Missing mandatory Host" in refused:
            return None, "looser: an HTTP/1.1 request without Host"
        if tags & LOOSER:
            return None, "looser: " + cause(tags & LOOSER, False)
        # h11's word for an empty line where a request line should be: one the server skips
        # (a mutated length can end a body just before a line break, which no bytes tell).
        if mutated and refused == "no request line received":
            return None, "looser: empty lines before a request line, after a body (mutated)"
        if mutated and looser_bytes(data):
            return None, "looser: a target byte 0x80-0xFF, or empty lines first (mutated)"
        return "the server answered request %d (%d %s) that h11 %s" % (
            i, status, body[:160], "refused" if refused else "never saw whole"), None
    if len(answers) < len(seen):
        return "the server answered %d of the %d requests h11 accepted" % (len(answers), len(seen)), None
    return None, None


def cause(tags, mutated):
    return sorted(tags)[0] if tags else "a mutated input"


def looser_bytes(data):
    """What the server accepts where h11 refuses (see the docstring): a byte 0x80-0xFF in a
    request target, or empty lines before a request line."""
    if re.search(rb" [^ \r\n]*[\x80-\xff][^ \r\n]* HTTP/", data):
        return True
    return bool(re.search(rb"(^|\r?\n\r?\n)\r?\n", data))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--cases", type=int, default=0, help="stop after this many inputs (0: until --seconds)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--show", type=int, default=0, help="print this many inputs of each explained difference")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print("framing differential: seed %d, h11 %s" % (seed, h11.__version__))
    deadline = time.monotonic() + args.seconds
    case = 0
    counted = {}
    failures = []
    while time.monotonic() < deadline and (args.cases == 0 or case < args.cases):
        case += 1
        requests, data, mutated = generate(rng, case)
        answers = read_answers(args.port, data, timeout=5)
        if answers is None:
            failures.append("case %d: the server neither answered nor closed within 5 s: %r" % (case, data))
            continue
        failure, note = compare(requests, data, mutated, answers)
        if failure:
            failures.append("case %d: %s\n    input: %r" % (case, failure, data))
        elif note:
            counted[note] = counted.get(note, 0) + 1
            if counted[note] <= args.show:
                print("  %s: %r -> %s" % (note, data, [a[0] for a in answers]))
        if len(failures) >= 20:
            break
    print("framing differential: %d inputs, %d failures; differences the docstring explains:" % (case, len(failures)))
    for note, count in sorted(counted.items()):
        print("  %6d  %s" % (count, note))
    for failure in failures:
        print("  " + failure)
    if failures:
        print("replay with --seed %d" % seed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
