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
# floods of their own), and suites whose checks still run on real time (a 1-2 s Redis
# timeout, a stream's reconnect, a logger's flush, a command that must give up within its
# timeout). Each group runs in a pass of its own after the rest, so that a wait never
# shares the two cores with a flood or with a hundred other tests starting Redis servers;
# the heavy suites run one test at a time. Policy tests
# need neither: they move Redis's state forward in time (RedisTestClient.advanceTime).
heavy_suites='HostileInputTests|AbusePumpingTests|RedisFaultTests|GateClusterTests|RedisClusterSupportTests|AbuseConnectionMemoryTests|AbuseMemoryBudgetTests|AbuseFileDescriptorTests|AbuseShutdownTests|AbusePhoneCacheTests|AbuseStreamExhaustionTests|AbuseSlowBodyTests'
timed_suites='CountdownStreamTests|ResendgateCommandTests|StreamProtocolTests|GateFailureTests|GateLoggerTests|ServerLogTests|ClientCallTests|InAnAppTests|ResendButtonModelTests'

# `swift test ARGS` in three passes: everything else in parallel, then the timed suites,
# then the heavy ones, one test at a time.
swift_test_in_passes() {
    swift test --skip-build --skip "$heavy_suites|$timed_suites" "$@" &&
        swift test --skip-build --filter "$timed_suites" "$@" &&
        swift test --skip-build --no-parallel --filter "$heavy_suites" "$@"
}

# dev_resendgate: the path of this worktree's resendgate (its debug build, built when stale),
# for the tools that load a script as Redis runs it: `resendgate lua-script NAME [--scripts
# DIR]` (docs/development.md) links it with the gate's own linker.
dev_resendgate() {
    ensure_swift
    (cd "$(repo_root)" && swift build --product resendgate 2>&1 | tail -1 >&2 && printf '%s/resendgate\n' "$(swift build --show-bin-path)")
}

# --- Processes: ports, Redis, stopping ----------------------------------------------------

# Prints a free TCP port on 127.0.0.1, picked by the kernel (deploy/free_port.py, the one
# helper the Python tools import too). Another process may take it before it is used;
# start_redis notices when another server answers on it.
free_port() { python3 "$(repo_root)/deploy/free_port.py"; }

# Succeeds when something accepts connections on 127.0.0.1:PORT.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# live_pid FILE NAME: prints the pid in FILE if that process runs and its command name
# starts with NAME; fails otherwise (no file, a stale pid, a pid reused by something else).
live_pid() {
    local file=$1 name=$2 pid
    [[ -f $file ]] || return 1
    pid=$(<"$file")
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name"* ]] || return 1
    printf '%s\n' "$pid"
}

# stop_pid PID [NAME] [SECONDS]: stops a process this script started: SIGTERM (and SIGCONT,
# so a stopped one can act on it), up to SECONDS (default 10) for it to exit, then SIGKILL
# with a warning naming NAME. No PID, or one that has exited, is fine: meant for traps.
stop_pid() {
    local pid=${1:-} name=${2:-process} seconds=${3:-10} waited=0
    [[ -n $pid ]] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        kill -CONT "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null && ((waited < seconds * 10)); do
            sleep 0.1
            waited=$((waited + 1))
        done
        if kill -0 "$pid" 2>/dev/null; then
            warn "$name (pid $pid) did not stop within $seconds s; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    wait "$pid" 2>/dev/null || true # reaps it when it is our child
}

# Every Redis that start_redis started in this script (redis_pid is the newest), so that a
# cleanup trap can stop them all: for pid in "${redis_pids[@]}"; do stop_pid "$pid" ...
redis_pids=()
redis_pid=""

# wait_until NAME PID LOG SECONDS COMMAND [ARGS...]: runs COMMAND every 0.1 s until it
# succeeds, while process PID (NAME, its output in LOG) runs; dies with the end of LOG when
# PID exits or SECONDS pass first. The one wait for every server the scripts start.
wait_until() {
    local name=$1 pid=$2 log=$3 seconds=$4
    local deadline=$((SECONDS + seconds + 1)) # SECONDS counts whole seconds: wait at least SECONDS
    shift 4
    until "$@" >/dev/null 2>&1; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$log" >&2 || true
            die "$name exited during startup (log above: $log)"
        fi
        if ((SECONDS >= deadline)); then
            tail -n 20 "$log" >&2 || true
            die "$name was not ready within $seconds s (log above: $log)"
        fi
        sleep 0.1
    done
}

# start_redis CONF PORT DIR [redis-server options...]
# Starts redis-server in the background on 127.0.0.1:PORT with CONF (a config file, or ""
# for Redis's own defaults), working dir DIR (made if missing; AOF and RDB files go there),
# log DIR/redis.log and pid file DIR/redis.pid; the options come after those. It runs in
# its own session (setsid): Ctrl-C in the terminal reaches the script, whose trap stops
# Redis, and a Redis meant to outlive the script (deploy/cluster) does. Sets redis_pid (and
# adds it to redis_pids) before it waits, so a trap that stops "$redis_pid" covers a start
# that fails. Waits until that very process answers PING (LOADING while it replays its AOF
# is "not yet"), for redis_wait_seconds (default 10; e.g. `redis_wait_seconds=60
# start_redis ...`); dies with the end of its log when it exits or does not answer in time.
start_redis() {
    local conf=$1 port=$2 dir=$3 answering_pid
    shift 3
    if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
        die "redis-server and redis-cli are needed; run deploy/install-deps"
    fi
    mkdir -p "$dir"
    local args=(--port "$port" --bind 127.0.0.1 --dir "$dir" --logfile "$dir/redis.log"
        --pidfile "$dir/redis.pid" --daemonize no "$@")
    [[ -z $conf ]] || args=("$conf" "${args[@]}")
    # Its own output (a config error comes before the log file is open) goes to the log too.
    setsid redis-server "${args[@]}" </dev/null >>"$dir/redis.log" 2>&1 &
    redis_pid=$!
    redis_pids+=("$redis_pid")
    wait_until "redis-server on port $port" "$redis_pid" "$dir/redis.log" "${redis_wait_seconds:-10}" \
        redis_answers_ping "$port"
    # A port from free_port can be taken by someone else before Redis binds it.
    answering_pid=$(redis-cli -h 127.0.0.1 -p "$port" INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')
    [[ $answering_pid == "$redis_pid" ]] \
        || die "another Redis (pid ${answering_pid:-unknown}) answers on port $port, not the one just started (pid $redis_pid)"
}

# Succeeds when the Redis on 127.0.0.1:PORT answers PONG (not LOADING, not an error) within 2 s.
redis_answers_ping() { [[ $(timeout 2 redis-cli -h 127.0.0.1 -p "$1" PING 2>/dev/null) == PONG ]]; }

# --- Gates we start ----------------------------------------------------------------------

# listening_port PID LOG [SECONDS]: prints the port that `resendgate serve --port 0` (process
# PID, its output in LOG) says it listens on, waiting up to SECONDS (default 20) for it.
listening_port() {
    local pid=$1 log=$2 pattern='listening on http://127\.0\.0\.1:[0-9]+' line
    wait_until "resendgate serve" "$pid" "$log" "${3:-20}" grep -q -E "$pattern" "$log"
    line=$(grep -o -m 1 -E "$pattern" "$log")
    printf '%s\n' "${line##*:}"
}

# wait_for_url NAME PID URL LOG [SECONDS]: waits until URL answers 2xx while process PID (NAME,
# its output in LOG) runs, up to SECONDS (default 20).
wait_for_url() {
    wait_until "$1" "$2" "$4" "${5:-20}" curl -sf -o /dev/null -m 2 "$3"
}

# wait_for_cluster SECONDS PORT...: waits until every Redis Cluster node on these loopback
# ports says cluster_state:ok, serves all 16384 slots and knows all the nodes given; fails
# (returns 1) when that has not happened within SECONDS, so the caller says what to do.
wait_for_cluster() {
    local seconds=$1 tries=0 port state ok_nodes
    shift
    while true; do
        ok_nodes=0
        for port in "$@"; do
            state=$(redis-cli -h 127.0.0.1 -p "$port" CLUSTER INFO 2>/dev/null | tr -d '\r')
            [[ $state == *cluster_state:ok* && $state == *cluster_slots_ok:16384* && $state == *cluster_known_nodes:$#* ]] \
                && ok_nodes=$((ok_nodes + 1))
        done
        ((ok_nodes == $#)) && return 0
        ((++tries < seconds * 10)) || return 1
        sleep 0.1
    done
}
