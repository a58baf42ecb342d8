# shellcheck shell=bash
# Helpers shared by the deploy/ scripts. Sourced, never run.

# Progress and errors: one line each, prefixed with the script's name.
script_name=$(basename "$0")
say() { printf '==> %s: %s\n' "$script_name" "$*"; }
warn() { printf '==> %s: warning: %s\n' "$script_name" "$*" >&2; }
die() { printf '%s: error: %s\n' "$script_name" "$*" >&2; exit 1; }

# The repository root (the folder above deploy/).
repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root to run '$*' and sudo is not installed; rerun as root"
    fi
}

# Puts swift on PATH when it is installed in /opt/swift but not on PATH yet; fails clearly otherwise.
ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 || die "swift not found on PATH or in /opt/swift/usr/bin; install Swift 6 for Debian 12 from https://www.swift.org/install/linux/ (e.g. unpack the tarball into /opt/swift) and rerun"
}

# Seconds since the epoch, for stage timings.
now() { date +%s; }

# Suites that load the machine on purpose (floods of connections, Redis stalls and kills,
# multi-node clusters that fail over; the abuse suites measure a server's CPU and RSS under
# floods of their own), and suites whose checks run on 1-2 s policy
# windows. Each group runs in a pass of its own after the rest, so that a window never
# shares the two cores with a flood or with a hundred other tests starting Redis servers;
# the heavy suites run one test at a time.
heavy_suites='HostileInputTests|RedisFaultTests|GateClusterTests|RedisClusterSupportTests|AbuseConnectionMemoryTests|AbuseFileDescriptorTests|AbuseShutdownTests'
timed_suites='GatePolicyTests|PolicyRoutesTests|PolicyCommandTests'

# `swift test ARGS` in three passes: everything else in parallel, then the timed suites,
# then the heavy ones, one test at a time.
swift_test_in_passes() {
    swift test --skip-build --skip "$heavy_suites|$timed_suites" "$@" &&
        swift test --skip-build --filter "$timed_suites" "$@" &&
        swift test --skip-build --no-parallel --filter "$heavy_suites" "$@"
}
