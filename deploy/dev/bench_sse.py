#!/usr/bin/env python3
"""Opens N concurrent SSE streams of countdowns against a running resendgate server and
reports the server's CPU time and RSS while they are held (Linux /proc), and the ticks received.

usage: bench_sse.py --port P --pid SERVER_PID [--streams 10000] [--hold 15] [--sources 4]
"""
import argparse, asyncio, json, os, re, sys, time

TICK = b"event: tick"


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def proc_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def http_request(reader, writer, method, path, body=None):
    data = body.encode() if body else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    writer.write(head.encode() + data)
    status_line = await reader.readline()
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    payload = await reader.readexactly(length) if length else b""
    return int(status_line.split()[1]), payload


async def make_tokens(port, count, prefix, connections=64):
    """One allowed send per number, over keep-alive connections; returns the tokens."""
    tokens = [None] * count
    numbers = iter(range(count))

    async def worker():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in numbers:
            status, payload = await http_request(reader, writer, "POST", "/v1/sends",
                                                 json.dumps({"phone": f"+86{prefix}{i:08d}"}))
            if status not in (200, 429):
                raise RuntimeError(f"send {i}: HTTP {status} {payload[:200]!r}")
            tokens[i] = json.loads(payload)["countdown_token"]
        writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return tokens


class Stream(asyncio.Protocol):
    def __init__(self, stats):
        self.stats = stats
        self.tail = b""
        self.transport = None
        self.opened = False

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        chunk = self.tail + data
        self.stats["ticks"] += chunk.count(TICK)
        if not self.opened and b" 200 " in chunk[:16]:
            self.opened = True
            self.stats["open"] += 1
        if b"event: done" in chunk:
            self.stats["done"] += 1
        self.stats["heartbeats"] += chunk.count(b": heartbeat")
        self.tail = chunk[-(len(TICK) - 1):]  # a marker split across reads is counted once

    def connection_lost(self, exc):
        self.stats["lost"] += 1


async def open_streams(port, tokens, sources, stats, concurrency=256):
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(concurrency)
    transports = []

    async def one(i, token):
        async with gate:
            source = sources[i % len(sources)]
            transport, protocol = await loop.create_connection(
                lambda: Stream(stats), "127.0.0.1", port, local_addr=(source, 0))
            transport.write(f"GET /v1/countdowns/{token}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            f"Accept: text/event-stream\r\n\r\n".encode())
            transports.append(transport)
            # wait for the first tick so the opening rate reflects the server's work
            for _ in range(2000):
                if protocol.opened:
                    break
                await asyncio.sleep(0.005)

    await asyncio.gather(*(one(i, t) for i, t in enumerate(tokens)))
    return transports


async def metric(port, name):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    _, payload = await http_request(reader, writer, "GET", "/metrics")
    writer.close()
    m = re.search(rf"^{name} (\S+)$", payload.decode(), re.M)
    return float(m.group(1)) if m else None


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--sources", type=int, default=4, help="client source addresses 127.0.0.1..N")
    args = parser.parse_args()
    sources = [f"127.0.0.{i}" for i in range(1, args.sources + 1)]
    pid = args.pid

    rss_idle = proc_rss_mib(pid)
    started = time.monotonic()
    tokens = await make_tokens(args.port, args.streams, prefix="139")
    print(f"tokens: {len(tokens)} sends in {time.monotonic() - started:.1f} s")

    stats = {"ticks": 0, "open": 0, "done": 0, "lost": 0, "heartbeats": 0}
    cpu_before_open = proc_cpu_seconds(pid)
    started = time.monotonic()
    transports = await open_streams(args.port, tokens, sources, stats)
    open_seconds = time.monotonic() - started
    cpu_open = proc_cpu_seconds(pid) - cpu_before_open
    print(f"opened: {stats['open']} of {len(tokens)} streams in {open_seconds:.1f} s "
          f"(server CPU {cpu_open:.2f} s for opening, incl. one Redis peek each)")
    gauge = await metric(args.port, "resendgate_sse_streams")
    print(f"server gauge resendgate_sse_streams: {gauge:.0f}")

    ticks_before = stats["ticks"]
    cpu_before = proc_cpu_seconds(pid)
    wall_before = time.monotonic()
    rss_peak = 0.0
    while time.monotonic() - wall_before < args.hold:
        await asyncio.sleep(1)
        rss_peak = max(rss_peak, proc_rss_mib(pid))
    held = time.monotonic() - wall_before
    cpu_held = proc_cpu_seconds(pid) - cpu_before
    ticks = stats["ticks"] - ticks_before
    print(f"held: {held:.1f} s with {stats['open'] - stats['lost']} streams open")
    print(f"ticks received while held: {ticks} ({ticks / held:.0f}/s, {ticks / max(1, stats['open']) / held:.2f} per stream per s); "
          f"heartbeats {stats['heartbeats']}; streams lost {stats['lost']}")
    print(f"server CPU while held: {cpu_held:.2f} s in {held:.1f} s = {100 * cpu_held / held:.1f}% of one core")
    print(f"server RSS: {rss_idle:.1f} MiB idle before, {rss_peak:.1f} MiB peak with the streams "
          f"(~{1024 * (rss_peak - rss_idle) / max(1, stats['open']):.1f} KiB per stream)")

    for transport in transports:
        transport.close()
    deadline = time.monotonic() + 10
    gauge = await metric(args.port, "resendgate_sse_streams")
    while gauge and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        gauge = await metric(args.port, "resendgate_sse_streams")
    print(f"after the clients left: resendgate_sse_streams {gauge:.0f}, RSS {proc_rss_mib(pid):.1f} MiB")
    ok = stats["open"] == len(tokens) and stats["lost"] == len(tokens) and gauge == 0 and ticks > 0
    print("RESULT:", "ok" if ok else "PROBLEM (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
