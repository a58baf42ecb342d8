"""What deploy/dev/doc-examples compares besides the examples' answers: the docs' tables of
metrics, error codes, statuses and options with the running server and the code, their
prose claims about defaults, and the list of blocks marked not run. Each check returns
problems as "file:line: expected ..., got ..." strings. Python 3 standard library only.
"""

import collections
import os
import re
import subprocess
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKTICKED = re.compile(r"`([^`]+)`")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def table_after(lines, header_prefix, after=None):
    """(line number of the header, [(number, [cells])]) of the first table whose header line
    starts with `header_prefix` (after the first line that holds `after`), or (None, [])."""
    begin = next((i for i, t in enumerate(lines) if after in t), len(lines)) if after else 0
    for i, text in enumerate(lines):
        if i >= begin and text.startswith(header_prefix):
            rows = []
            for j in range(i + 2, len(lines)):
                if not lines[j].startswith("|"):
                    break
                rows.append((j + 1, [c.strip() for c in lines[j].strip().strip("|").split("|")]))
            return i + 1, rows
    return None, []


# --- the code's truth ----------------------------------------------------------------------

def gate_error_codes(root=ROOT):
    """{wire code: status} from Sources/ResendGateServer/APIError.swift and GateError.Kind."""
    kinds = {}
    for line in read_lines(os.path.join(root, "Sources/ResendGate/Gate/GateError.swift")):
        m = re.match(r"^\s*case (\w+)(?: = \"([a-z_]+)\")?\s*(//.*)?$", line)
        if m:
            kinds[m.group(1)] = m.group(2) or m.group(1)
    codes = {}
    text = "\n".join(read_lines(os.path.join(root, "Sources/ResendGateServer/APIError.swift")))
    for m in re.finditer(r'APIError\("([a-z_]+)", (\d{3})', text):
        codes[m.group(1)] = int(m.group(2))
    for m in re.finditer(r"^\s*case ((?:\.\w+,?\s*)+): (\d{3})$", text, re.M):
        for kind in re.findall(r"\.(\w+)", m.group(1)):
            codes[kinds.get(kind, kind)] = int(m.group(2))
    return codes


def statuses_of_code(root=ROOT):
    """Every status the server answers: the error codes' and the routes' own (200, 204)."""
    found = set(gate_error_codes(root).values())
    for folder, _, names in os.walk(os.path.join(root, "Sources/ResendGateServer")):
        for name in names:
            if name.endswith(".swift"):
                text = "\n".join(read_lines(os.path.join(folder, name)))
                found |= {int(s) for s in re.findall(r"\bstatus(?:Code)?: (\d{3})\b", text)}
    return found


def option_names(binary):
    """Every option of every `resendgate` command, from their --help."""
    names = {"version", "help"}
    top = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    commands = re.findall(r"^  ([a-z]+) ", top, re.M)
    for command in commands:
        out = subprocess.run([binary, command, "--help"], capture_output=True, text=True).stdout
        names |= set(re.findall(r"^  --([a-z0-9-]+)", out, re.M))
    return names


def serve_defaults(binary):
    """{option: default} as `resendgate serve --help` prints them."""
    out = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    found, current = {}, None
    for line in out.split("\n"):
        m = re.match(r"^  --([a-z0-9-]+)", line)
        if m:
            current = m.group(1)
        m = re.search(r"\(default: ([^)]*)\)\s*$", line)
        if m and current:
            found[current] = m.group(1)
    return found


def live_metrics(port):
    """{name: type} from a running gate's /metrics (# TYPE lines)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))


# --- the docs' tables ----------------------------------------------------------------------

def check_metrics(api_path, rel, metrics):
    lines = read_lines(api_path)
    header, rows = table_after(lines, "| metric | type |")
    if header is None:
        return [f"{rel}: a metrics table (| metric | type |), found none"]
    problems, documented = [], {}
    for number, cells in rows:
        m = re.match(r"^`([a-z_]+)(\{[^}]*\})?`$", cells[0])
        if not m:
            problems.append(f"{rel}:{number}: expected a metric name in backticks, got {cells[0]!r}")
            continue
        documented[m.group(1)] = (number, cells[1] if len(cells) > 1 else "")
    for name, kind in sorted(metrics.items()):
        if name not in documented:
            problems.append(f"{rel}:{header}: expected a row for {name} ({kind}), which GET /metrics serves")
        elif documented[name][1] != kind:
            problems.append(f"{rel}:{documented[name][0]}: expected {name}'s type {kind}, got {documented[name][1]}")
    for name, (number, _) in sorted(documented.items()):
        if name not in metrics:
            problems.append(f"{rel}:{number}: expected only metrics GET /metrics serves, got {name}")
    return problems


def check_error_codes(api_path, rel, codes):
    """The table after "Each code has one status" has every code with its status; every other
    table of codes (a route's) gives each the status the code has."""
    lines = read_lines(api_path)
    header, rows = table_after(lines, "| status | code | when |", "Each code has one status")
    if header is None:
        return [f"{rel}: an error-code table (| status | code | when |) after \"Each code has one status\", found none"]
    problems, documented = [], {}
    for number, text in enumerate(lines, 1):
        if number in {n for n, _ in rows} or not re.match(r"^\| [1-5]\d\d \| `", text):
            continue
        cells = [c.strip() for c in text.strip().strip("|").split("|")]
        for code in BACKTICKED.findall(cells[1]):
            if code in codes and str(codes[code]) != cells[0]:
                problems.append(f"{rel}:{number}: expected {code}'s status {codes[code]} (APIError.swift), got {cells[0]}")
    for number, cells in rows:
        for code in BACKTICKED.findall(cells[1]):
            documented[code] = number
            if code not in codes:
                problems.append(f"{rel}:{number}: expected only error codes of APIError.swift and GateError.Kind, got {code}")
            elif str(codes[code]) != cells[0]:
                problems.append(f"{rel}:{number}: expected {code}'s status {codes[code]} (APIError.swift), got {cells[0]}")
    for code in sorted(set(codes) - set(documented)):
        problems.append(f"{rel}:{header}: expected a row for the error code {code} ({codes[code]}), which the server answers")
    return problems


def check_statuses(api_path, rel, statuses):
    lines = read_lines(api_path)
    header, rows = table_after(lines, "| status | meaning here |")
    if header is None:
        return [f"{rel}: a status table (| status | meaning here |), found none"]
    problems, documented = [], set()
    for number, cells in rows:
        if not cells[0].isdigit() or int(cells[0]) not in statuses:
            problems.append(f"{rel}:{number}: expected only statuses the server answers, got {cells[0]}")
        elif int(cells[0]) in documented:
            problems.append(f"{rel}:{number}: expected each status once, got {cells[0]} again")
        documented.add(int(cells[0]) if cells[0].isdigit() else 0)
    for status in sorted(statuses - documented):
        problems.append(f"{rel}:{header}: expected a row for the status {status}, which the server answers")
    return problems


def check_option_cells(path, rel, options):
    """Every `--name` that opens a backticked span in a table cell is an option of resendgate
    (or of the deploy/ tool the same span names)."""
    problems = []
    for number, text in enumerate(read_lines(path), 1):
        if not text.startswith("|") or "deploy/" in text:  # a row about a deploy/ tool names its flags
            continue
        for span in BACKTICKED.findall(text):
            m = re.match(r"^--([a-z][a-z0-9-]*)", span)
            if m and m.group(1) not in options:
                problems.append(f"{rel}:{number}: expected an option resendgate has, got --{m.group(1)}")
    return problems


# --- prose --------------------------------------------------------------------------------

NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
REFUNDS_A_DAY = [re.compile(r"\b(\d+|one|two|three|four|five) refunds? a day\b", re.I),
                 re.compile(r"\brefunds? \((\d+|one|two|three) a day\)", re.I)]


def check_prose(path, rel, defaults):
    """Claims about the defaults written as prose: "N refund(s) a day" is --max-refunds in
    --window when the default window is a day."""
    problems = []
    if defaults.get("window") not in ("24h", "86400s", "1d"):
        return problems
    allowed = defaults.get("max-refunds")
    for number, text in enumerate(read_lines(path), 1):
        for pattern in REFUNDS_A_DAY:
            for m in pattern.finditer(text):
                said = m.group(1).lower()
                said = NUMBERS.get(said, int(said) if said.isdigit() else None)
                if allowed is not None and str(said) != allowed:
                    problems.append(f"{rel}:{number}: expected {allowed} refund(s) a day (--max-refunds "
                                    f"{allowed} in --window {defaults['window']}), got {m.group(0)!r}")
    return problems


# --- blocks marked not run -------------------------------------------------------------------

def check_not_run(found, list_path, files_checked):
    """The blocks marked not run are those deploy/dev/doc-examples.not-run lists ("file: reason"),
    for the files checked: one more fails, naming its line; one fewer names the list's line."""
    listed = collections.Counter()
    where = {}
    for number, text in enumerate(read_lines(list_path), 1):
        if not text.strip() or text.startswith("#"):
            continue
        rel, _, reason = text.partition(": ")
        if rel in files_checked:
            listed[(rel, reason.strip())] += 1
            where.setdefault((rel, reason.strip()), number)
    seen = collections.Counter()
    problems = []
    for rel, line, reason in found:
        seen[(rel, reason)] += 1
        if seen[(rel, reason)] > listed[(rel, reason)]:
            problems.append(f"{rel}:{line}: expected a block that runs, got one marked not run ({reason}) "
                            f"beyond what deploy/dev/doc-examples.not-run lists ({listed[(rel, reason)]} such)")
    for key, count in listed.items():
        if seen[key] < count:
            problems.append(f"deploy/dev/doc-examples.not-run:{where[key]}: expected {count} block(s) of {key[0]} "
                            f"marked not run ({key[1]}), got {seen[key]}: remove the line")
    return problems
