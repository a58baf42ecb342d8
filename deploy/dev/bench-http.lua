-- wrk script for deploy/dev/bench-http: POST /v1/sends with {"phone":"+86138XXXXXXXX"}.
-- Numbers are random valid CN mobiles (138 + 8 random digits); about one request in four
-- (REPEAT_PROBABILITY) repeats one of the thread's last RECENT numbers instead, so that with
-- a long cooldown the gate answers those with 429 (a valid decision, counted by wrk as
-- "non-2xx"). The same script loads nginx, so both sides see the same requests.
-- done() prints one machine-readable line, "BENCH key=value ...", that bench-http parses.

local REPEAT_PROBABILITY = 0.25
-- deploy/dev/bench-http --client-ips N: each request names one of N client addresses.
local CLIENT_IPS = tonumber(os.getenv("BENCH_CLIENT_IPS") or "0") or 0
local RECENT = 256

local recent = {}
local recent_count = 0
local recent_next = 0

-- The main state hands each thread its own id, so threads draw different numbers.
local threads = {}
local thread_count = 0
function setup(thread)
    thread_count = thread_count + 1
    thread:set("thread_id", thread_count)
    table.insert(threads, thread)
end

function init(args)
    -- os.time() has whole seconds; the id keeps two threads started together apart.
    math.randomseed(os.time() * 7919 + (thread_id or 0) * 104729)
    wrk.method = "POST"
    wrk.path = "/v1/sends"
    wrk.headers["Content-Type"] = "application/json"
end

function request()
    local phone
    if recent_count > 0 and math.random() < REPEAT_PROBABILITY then
        phone = recent[math.random(math.min(recent_count, RECENT))]
    else
        phone = string.format("+86138%08d", math.random(0, 99999999))
        recent_next = recent_next % RECENT + 1
        recent[recent_next] = phone
        recent_count = recent_count + 1
    end
    if CLIENT_IPS > 0 then
        local n = math.random(0, CLIENT_IPS - 1)
        local ip = string.format("10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
        return wrk.format(nil, nil, nil, '{"phone":"' .. phone .. '","client_ip":"' .. ip .. '"}')
    end
    return wrk.format(nil, nil, nil, '{"phone":"' .. phone .. '"}')
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        "BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d " ..
        "connect=%d read=%d write=%d timeout=%d non2xx=%d\n",
        summary.requests, summary.duration,
        latency:percentile(50), latency:percentile(99), latency.max,
        e.connect, e.read, e.write, e.timeout, e.status))
end
