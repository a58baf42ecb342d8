"""deploy/dev/doc-examples --self-test: each kind of drift the docs stage must catch, applied to
a copy of the docs; the stage must fail on each, naming the file and the tampered line (or
the table's header, for a row that is missing). Python 3 standard library only.
"""

import os
import shutil
import subprocess
import tempfile

# (what it stands for, file, text to find, its replacement, the line named: "found" for the
# line the text is on, or a text whose line must be named instead)
TAMPERINGS = [
    ("retry_after 55 beside retry_after_ms 60000", "README.md",
     '"retry_after":60,"retry_after_ms":60000', '"retry_after":55,"retry_after_ms":60000', "found"),
    ("Retry-After: 65 on a 60 s cooldown", "README.md", "# 429, Retry-After: 60,", "# 429, Retry-After: 65,", "found"),
    ("a peek of 66 s right after a 60 s send", "README.md",
     '"active":true,"retry_after":60', '"active":true,"retry_after":66', "found"),
    ("a peek of 54 s (below what the server says)", "README.md",
     '"active":true,"retry_after":60', '"active":true,"retry_after":54', "found"),
    ("3 refunds a day where the server allows 1", "README.md", "(1 a day)", "(3 a day)", "found"),
    ("a metric missing from the table", "docs/API.md",
     "| `resendgate_http_connections_shed_total` |", "| `resendgate_http_connections_shed_totals` |", "found"),
    ("an error code's status changed", "docs/API.md",
     "| 415 | `unsupported_media_type` |", "| 416 | `unsupported_media_type` |", "found"),
    ("a status missing from the status table", "docs/API.md",
     "| 431 | request headers too large |\n", "", "| status | meaning here |"),
    ("an option that does not exist, in a table", "docs/internals.md",
     "| idempotency | `GateConfiguration.idempotencyLifetime` (24 h; no option) |",
     "| idempotency | `--idempotency-lifetime` |", "found"),
    ("a block that nothing runs, unmarked", "README.md",
     "## A five-minute tour\n", "## A five-minute tour\n\n```json\n{\"allowed\": true}\n```\n", "```json"),
    ("a step that shows no answer", "docs/anti-abuse.md",
     "done\n# exit 0\n#    ...and a pumping bot", "done\n#    ...and a pumping bot", "done\n#    ...and a pumping bot"),
    ("one more block marked not run", "README.md",
     "## A five-minute tour\n", "## A five-minute tour\n\n<!-- not run: a new excuse -->\n```sh\ntrue\n```\n",
     "```sh\ntrue\n"),
]


def copy_docs(root, into):
    for rel in ("README.md", "docs", "deploy", "Examples"):
        source = os.path.join(root, rel)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(into, rel), ignore=shutil.ignore_patterns(".*", "__pycache__"))
        elif os.path.exists(source):
            shutil.copy(source, os.path.join(into, rel))


def run(script, binary, root):
    failures = 0
    for what, rel, find, replace, named in TAMPERINGS:
        work = tempfile.mkdtemp(prefix="resendgate-doc-self-test.", dir=os.environ.get("TMPDIR"))
        try:
            copy_docs(root, work)
            path = os.path.join(work, rel)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if find not in text:
                print(f"self-test: {what}: {rel} no longer holds {find!r}: update deploy/dev/doc_self_test.py")
                failures += 1
                continue
            at = text.index(find)
            text = text[:at] + replace + text[at + len(find):]
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            marker = replace if named == "found" else named
            line = text[:text.index(marker)].count("\n") + 1 if marker else text[:at].count("\n") + 1
            if named == "found" and not replace:
                line = text[:at].count("\n") + 1
            result = subprocess.run([script, "--binary", binary, "--docs-root", work, rel],
                                    capture_output=True, text=True, timeout=300)
            where = f"{rel}:{line}:"
            if result.returncode == 1 and where in result.stdout:
                said = next(l for l in result.stdout.splitlines() if l.startswith(where))
                print(f"self-test: {what}: fails as it must: {said[:200]}")
            else:
                failures += 1
                print(f"self-test: {what}: expected exit 1 naming {where}, got exit {result.returncode}:\n"
                      f"{result.stdout[-2000:]}{result.stderr[-1000:]}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"self-test: {len(TAMPERINGS) - failures} of {len(TAMPERINGS)} tamperings caught")
    return 1 if failures else 0
