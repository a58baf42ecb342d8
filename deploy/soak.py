#!/usr/bin/env python3
"""Load generator and checker of deploy/soak (Python 3 standard library only).

  soak.py load  --port P[,P...] --seconds S --numbers 1000 --threads 16 --log FILE [--purpose soak]
      Mixed load on the gate (on several gates, thread by thread in turn): POST /v1/sends (9
      in 10) and GET /v1/cooldowns peeks (1 in 10) for random numbers out of N, from T
      threads with keep-alive connections. Every
      request is one JSON line in FILE with its client send and receive times (both
      time.monotonic(), CLOCK_MONOTONIC: the same clock the orchestrator stamps its fault
      windows with) and, for a decision, its server_time, resend_at and retry_after_ms.

  soak.py check --log FILE --events FILE --cooldown-ms 2000 [--rss-warm KB --rss-end KB]
      Proves three things from the logs and exits 1 if one fails:
      safety    no number was allowed twice within its cooldown: Redis ran each allowed
                SET somewhere inside its request's [send, receive] interval, so two allowed
                sends whose intervals lie less than a cooldown apart however they are placed
                are a double send (a proof, never a false alarm; the answers' server_time is
                the gate's clock for the default policy, which queueing can shift);
      liveness  every send that asked at least cooldown + tolerance after the number's
                previous possible reservation, while Redis and the gate were up, was allowed;
      memory    the gate's RSS at the end is within 10% of its value after warm-up.
      With --safety-only (deploy/faults) only safety and lost requests (never answered:
      every request gets an answer while a gate runs) fail it; the rest is printed.
      Either way it prints the 503s inside each fault window, by window.
"""

import argparse
import collections
import datetime
import http.client
import json
import random
import sys
import threading
import time

SEND_SHARE = 0.9


def phone(index):
    # +86 138 and 8 digits: valid Chinese mobile numbers, spread over the range.
    return "+86138%08d" % ((index * 7919 + 1234567) % 100_000_000)


def rfc3339_ms(text):
    if not text:
        return None
    moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(round(moment.timestamp() * 1000))


# --- load -----------------------------------------------------------------------------------

def load(args):
    deadline = time.monotonic() + args.seconds
    records = [[] for _ in range(args.threads)]
    stop = threading.Event()

    ports = [int(port) for port in str(args.port).split(",")]

    def worker(slot):
        rng = random.Random(slot * 7_777_777 + args.seed)
        out = records[slot]
        connection = None
        while not stop.is_set() and time.monotonic() < deadline:
            index = rng.randrange(args.numbers)
            is_send = rng.random() < SEND_SHARE
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", ports[slot % len(ports)], timeout=args.timeout)
            record = {"i": index, "op": "send" if is_send else "peek"}
            t0 = time.monotonic()
            try:
                if is_send:
                    body = json.dumps({"phone": phone(index), "purpose": args.purpose})
                    connection.request("POST", "/v1/sends", body=body,
                                       headers={"Content-Type": "application/json"})
                else:
                    connection.request("GET", "/v1/cooldowns/%%2B%s?purpose=%s" % (phone(index)[1:], args.purpose))
                response = connection.getresponse()
                data = response.read()
                t1 = time.monotonic()
                record["status"] = response.status
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
                if is_send and response.status in (200, 429):
                    decision = json.loads(data)
                    record["server_ms"] = rfc3339_ms(decision.get("server_time"))
                    record["resend_ms"] = rfc3339_ms(decision.get("resend_at"))
                    record["retry_ms"] = decision.get("retry_after_ms")
                elif response.status >= 500:
                    try:
                        record["code"] = json.loads(data)["error"]["code"]
                    except (ValueError, KeyError, TypeError):
                        record["code"] = "?"
            except (OSError, http.client.HTTPException) as error:
                t1 = time.monotonic()
                record["status"] = -1
                record["code"] = type(error).__name__
                if connection is not None:
                    connection.close()
                connection = None
            record["t0"] = round(t0, 6)
            record["t1"] = round(t1, 6)
            out.append(record)
            if record["status"] == -1:
                time.sleep(0.02)  # the gate is restarting: do not spin
            elif args.pause_ms:
                time.sleep(rng.random() * args.pause_ms / 1000)
        if connection is not None:
            connection.close()

    threads = [threading.Thread(target=worker, args=(slot,), daemon=True) for slot in range(args.threads)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        stop.set()
        for thread in threads:
            thread.join()
    with open(args.log, "w") as out:
        for bucket in records:
            for record in bucket:
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
    total = sum(len(bucket) for bucket in records)
    print("load: %d requests in %.0f s (%.0f/s)" % (total, args.seconds, total / args.seconds), flush=True)


# --- check ----------------------------------------------------------------------------------

def read_events(path):
    """Fault windows [start, end] (monotonic seconds) from the orchestrator's event lines:
    `<t> redis_down`, `<t> redis_up`, `<t> gate_down`, `<t> gate_up`, `<t> rss_warm <kB>` ..."""
    windows, open_at, marks = [], {}, {}
    with open(path) as lines:
        for line in lines:
            parts = line.split()
            if len(parts) < 2:
                continue
            moment, name = float(parts[0]), parts[1]
            if name.endswith("_down"):
                open_at[name[:-5]] = moment
            elif name.endswith("_up") and name[:-3] in open_at:
                windows.append((name[:-3], open_at.pop(name[:-3]), moment))
            else:
                marks[name] = (moment, parts[2:])
    for what, start in open_at.items():
        windows.append((what, start, float("inf")))
    return sorted(windows, key=lambda w: w[1]), marks


def check(args):
    cooldown_ms = args.cooldown_ms
    tolerance = args.tolerance_ms / 1000
    recovery = args.recovery_ms / 1000
    windows, marks = read_events(args.events)
    records = []
    with open(args.log) as lines:
        for line in lines:
            records.append(json.loads(line))
    records.sort(key=lambda r: r["t0"])
    sends = [r for r in records if r["op"] == "send"]
    statuses = collections.Counter(r["status"] for r in records)

    def in_window(t0, t1, extra_after):
        """The window a request [t0, t1] overlaps, widened by extra_after past its end."""
        for what, start, end in windows:
            if t1 >= start and t0 <= end + extra_after:
                return (what, start, end)
        return None

    failures = []

    # Safety: two allowed sends of one number were decided (Redis ran their SETs) at least a
    # cooldown apart. Each ran somewhere in its request's [t0, t1] (one host, one clock
    # rate), so the widest their decisions can be apart is the larger of the two
    # "end of one minus start of the other": below the cooldown, they were a double send.
    allowed_by_number = collections.defaultdict(list)
    for r in sends:
        if r["status"] == 200:
            allowed_by_number[r["i"]].append(r)
    safety_violations = []
    closest = None
    for index, allowed in allowed_by_number.items():
        allowed.sort(key=lambda r: r["t0"])
        for at, first in enumerate(allowed):
            for second in allowed[at + 1:]:
                if (second["t0"] - first["t1"]) * 1000 >= cooldown_ms:
                    break  # this one and every later one are provably a cooldown apart
                widest = round(max(second["t1"] - first["t0"], first["t1"] - second["t0"]) * 1000)
                closest = widest if closest is None else min(closest, widest)
                # The key's expiry and the clocks are kept to the millisecond: 1 ms of slack.
                if widest < cooldown_ms - 1:
                    safety_violations.append((phone(index), first["server_ms"], second["server_ms"], widest))
    allowed_total = sum(len(v) for v in allowed_by_number.values())
    if safety_violations:
        failures.append("safety: %d numbers allowed twice within the cooldown, e.g. %s" %
                        (len(safety_violations), safety_violations[:3]))

    # Liveness. A number's latest possible reservation, on the client's monotonic clock:
    # - an allowed answer: its cooldown ends by t1 + retry_after_ms (the reservation
    #   happened before the answer arrived);
    # - an answer that is not a decision (503, a dropped connection): the script may have
    #   run anyway, up to the answer's arrival or, inside a fault window, up to its end (a
    #   script written to a stalled or dying Redis can run when it comes back), so the
    #   cooldown may run until then + the cooldown.
    # A send is owed an "allowed" when it left after that + tolerance, and neither it nor
    # the recovery allowance after a fault overlaps a fault window.
    sends_by_number = collections.defaultdict(list)
    for r in sends:
        sends_by_number[r["i"]].append(r)

    def raced(r):
        # Another send for the same number in flight at the same time, that was allowed or
        # whose outcome is unknown: it may have taken the reservation first.
        return any(s is not r and s["status"] != 429 and s["t0"] < r["t1"] and s["t1"] > r["t0"]
                   for s in sends_by_number[r["i"]])

    busy_until = {}
    owed = kept = raced_count = 0
    liveness_failures = []
    excluded = 0
    for r in sends:  # in send order
        index = r["i"]
        horizon = busy_until.get(index, float("-inf"))
        window = in_window(r["t0"], r["t1"], recovery)
        if r["t0"] >= horizon + tolerance:
            if window is None and r["t0"] > args.start_after:
                owed += 1
                if r["status"] == 200:
                    kept += 1
                elif raced(r):
                    raced_count += 1
                    owed -= 1
                else:
                    liveness_failures.append((phone(index), r["status"], r.get("code"), round(r["t0"], 3),
                                              round(r["t0"] - horizon, 3)))
            else:
                excluded += 1
        if r["status"] == 200:
            busy_until[index] = max(horizon, r["t1"] + r["retry_ms"] / 1000)
        elif r["status"] != 429:
            edge = r["t1"]
            hit = in_window(r["t0"], r["t1"], 0)
            if hit is not None:
                edge = max(edge, hit[2] if hit[2] != float("inf") else r["t1"])
            busy_until[index] = max(horizon, edge + cooldown_ms / 1000)
    # Safety-only (deploy/faults): the rest is reported, not failed on.
    strict = failures
    if args.safety_only:
        failures = []
    if liveness_failures:
        failures.append("liveness: %d of %d sends owed an 'allowed' did not get it, e.g. %s" %
                        (len(liveness_failures), owed, liveness_failures[:5]))
    if owed < 10:
        failures.append("liveness: only %d sends were owed an 'allowed': the load is too thin to tell" % owed)

    # Errors outside fault windows: none expected.
    stray = [r for r in records if r["status"] not in (200, 204, 429) and in_window(r["t0"], r["t1"], recovery) is None]
    if stray:
        failures.append("%d requests failed outside any fault window, e.g. %s" % (len(stray), stray[:3]))

    # 503s inside windows: how fast (must be within the Redis timeout plus slack).
    worst_503 = max((r["t1"] - r["t0"] for r in records if r["status"] == 503), default=0)
    if worst_503 > args.redis_timeout_ms / 1000 + 0.5:
        failures.append("a 503 took %.0f ms (Redis timeout %d ms)" % (worst_503 * 1000, args.redis_timeout_ms))

    # Recovery: from each window's end to the first 200 after it.
    recoveries = []
    for what, start, end in windows:
        first = next((r["t1"] for r in sends if r["status"] == 200 and r["t0"] >= end), None)
        recoveries.append((what, end - start, None if first is None else first - end))
        if first is None or first - end > 1.0 + 0.25:
            failures.append("%s: no send allowed within 1 s of it being back (%s)" %
                            (what, "never" if first is None else "%.0f ms" % ((first - end) * 1000)))

    # Memory.
    rss = None
    if args.rss_warm and args.rss_end:
        growth = (args.rss_end - args.rss_warm) / args.rss_warm
        rss = (args.rss_warm, args.rss_end, growth)
        if growth > 0.10:
            failures.append("memory: RSS grew %.1f%% (%d kB after warm-up, %d kB at the end)" %
                            (growth * 100, args.rss_warm, args.rss_end))

    # Lost: never answered (a reset, a timeout) although the gate ran; a fault window of
    # the gate itself (gate_down ... gate_up) may drop its connections.
    lost = [r for r in records if r["status"] == -1 and not any(
        what == "gate" and r["t1"] >= start and r["t0"] <= end for what, start, end in windows)]
    if args.safety_only:
        reported = failures
        failures = strict
        if lost:
            failures.append("%d requests were never answered while the gate ran, e.g. %s" % (len(lost), lost[:3]))
    unavailable_by_window = collections.Counter()
    for r in records:
        if r["status"] == 503:
            hit = in_window(r["t0"], r["t1"], recovery)
            unavailable_by_window[hit[0] if hit else "none"] += 1

    duration = records[-1]["t1"] - records[0]["t0"] if records else 0
    print("soak check: %d requests in %.0f s (%.0f/s): %s" % (
        len(records), duration, len(records) / max(duration, 1),
        ", ".join("%s %d" % ("error" if k == -1 else k, v) for k, v in sorted(statuses.items()))))
    print("  safety:   %d allowed sends over %d numbers; %d pairs provably within the %d ms cooldown "
          "(the closest pair could be at most %s ms apart)" % (
        allowed_total, len(allowed_by_number), len(safety_violations), cooldown_ms, closest))
    print("  liveness: %d sends asked after their cooldown + %d ms with Redis and the gate up; %d allowed, %d not "
          "(%d more asked inside a fault window or its %d ms recovery allowance, %d raced another send "
          "of the same number)" % (owed, args.tolerance_ms, kept, owed - kept, excluded, args.recovery_ms, raced_count))
    for what, length, back in recoveries:
        print("  fault:    %-5s down %.2f s, first allowed send %s after it was back" % (
            what, length, "never" if back is None else "%.0f ms" % (back * 1000)))
    print("  503s:     worst answered in %.0f ms (Redis timeout %d ms)" % (worst_503 * 1000, args.redis_timeout_ms))
    if rss:
        print("  memory:   gate RSS %d kB after warm-up, %d kB at the end (%+.1f%%, bar +10%%)" % (
            rss[0], rss[1], rss[2] * 100))
    print("  lost:     %d requests never answered while the gate ran" % len(lost))
    print("  503s:     by fault window (and its recovery allowance): %s" % (
        ", ".join("%s %d" % item for item in sorted(unavailable_by_window.items())) or "none"))
    if args.safety_only:
        for note in reported:
            print("note (not failed on) " + note)
    for failure in failures:
        print("FAIL " + failure)
    print("soak: %s" % ("FAILED" if failures else "passed"))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("load")
    p.add_argument("--port", required=True, help="a gate's port, or several: P,P,...")
    p.add_argument("--purpose", default="soak")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--numbers", type=int, default=1000)
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--pause-ms", type=float, default=20, help="random pause of up to this between requests")
    p.add_argument("--timeout", type=float, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log", required=True)
    c = sub.add_parser("check")
    c.add_argument("--log", required=True)
    c.add_argument("--events", required=True)
    c.add_argument("--cooldown-ms", type=int, default=2000)
    c.add_argument("--tolerance-ms", type=int, default=100)
    c.add_argument("--recovery-ms", type=int, default=1000)
    c.add_argument("--redis-timeout-ms", type=int, default=1000)
    c.add_argument("--start-after", type=float, default=0, help="monotonic time before which nothing is owed")
    c.add_argument("--rss-warm", type=int)
    c.add_argument("--rss-end", type=int)
    c.add_argument("--safety-only", action="store_true",
                   help="fail only on a double send or a request never answered (deploy/faults)")
    args = parser.parse_args()
    if args.command == "load":
        load(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
