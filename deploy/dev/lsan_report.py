#!/usr/bin/env python3
"""Judges the sanitizer reports of a test run: deploy/dev/lsan_report.py DIR

DIR holds the files AddressSanitizer and LeakSanitizer wrote, one per process (LSAN_OPTIONS
log_path=DIR/report, exitcode=0; deploy/dev/test-asan sets them). Fails (status 1) if any
leaked allocation, direct or indirect, has a frame of our product code, or if
AddressSanitizer reported an error in any process. Leaks from the toolchain driving the
tests (deploy/dev/lsan.supp drops its known one-time ones) are counted and printed, not
failed on.
"""
import collections
import glob
import re
import sys

# Frames of our product code: the Swift modules (mangled module prefix) and the C libraries
# they drive. The test support ($s21ResendGateTestSupport) and the tests are not product code.
OURS = re.compile(r"#\d+ 0x[0-9a-f]+ in (\$s10ResendGate\d|\$s16ResendGateServer|\$s16ResendGateClient|\$s9Countdown\d|"
                  r"\$s10resendgate\d|\$s11RedisClient\d|\$s13GateEventLoop\d|\$s11GateRuntime\d|\$s8Policies\d|"
                  r"\$s12PhoneNumbers\d|rg_|redisAsync|redisLibevent|__redis|evhttp_|event_base|event_new|bufferevent_|"
                  r"phonenumber_|i18n::phonenumbers)")


def main(folder):
    processes = ours = other = other_bytes = 0
    toolchain = collections.Counter()
    examples = []
    errors = []
    for path in sorted(glob.glob(folder + "/report*")):
        text = open(path, errors="replace").read()
        # exitcode=0 is AddressSanitizer's too: a process it stopped (a double free, a use
        # after free) exited 0, and its report fails the run on its own.
        if "ERROR: AddressSanitizer" in text:
            errors.append(path + ":\n" + "\n".join(text.splitlines()[:80]))
        if "LeakSanitizer" not in text:
            continue
        processes += 1
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", text):
            m = re.match(r"(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+)", block)
            if not m:
                continue
            stack = block.split("\n\n")[0]
            if OURS.search(stack):
                ours += int(m.group(3))
                examples.append(stack)
            else:
                other += int(m.group(3))
                other_bytes += int(m.group(2))
                frames = re.findall(r"#\d+ 0x[0-9a-f]+ in (\S+)", stack)
                # Name the toolchain piece the allocation came from: the first frame outside
                # the allocator and the standard library's own storage helpers.
                culprit = next((f for f in frames if not re.match(
                    r"(malloc|calloc|realloc|swift_slowAlloc|swift_allocObject|_CFRuntimeCreateInstance|\$ss)", f)), "?")
                for name, pattern in (("Foundation.Process", "7ProcessC|ChildProcess|childEnvironment|outputFile"),
                                      ("Foundation URL/FileHandle", "URL|FileHandle"),
                                      ("XCTest / swift-testing", "XCTest|7Testing")):
                    if re.search(pattern, stack):
                        culprit = name
                        break
                toolchain[culprit[:60]] += int(m.group(3))
    print("LeakSanitizer: %d process reports; %d leaked allocations with a frame of our product code; "
          "%d (%d bytes) from the toolchain driving the tests:" % (processes, ours, other, other_bytes))
    for name, count in toolchain.most_common(8):
        print("    %6d  %s" % (count, name))
    for stack in examples[:5]:
        print(stack, file=sys.stderr)
    for report in errors[:3]:
        print("AddressSanitizer stopped a process of the tests:\n" + report, file=sys.stderr)
    if errors:
        print("AddressSanitizer: %d process(es) reported an error" % len(errors), file=sys.stderr)
    return 1 if ours or errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
