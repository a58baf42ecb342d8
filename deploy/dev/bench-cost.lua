-- wrk script for `deploy/dev/bench --only cost`: POST /v1/sends with random valid CN mobiles
-- (+86138 and 8 random digits), about one request in four repeating one of the thread's
-- last RECENT numbers (as deploy/dev/bench-http.lua does). The environment picks the mode:
--   COST_MODE=default   the body {"phone": ...} only (the default policy's decision)
--   COST_MODE=rules     also a client_ip from a pool of 1024 and a fresh Idempotency-Key
--                       each request, so every rule of the policy runs
--   COST_MODE=distinct  COST_LIMIT distinct numbers in all (split over the threads), never
--                       a repeat; past its share a thread repeats its last number (denied:
--                       it writes nothing), so exactly COST_LIMIT numbers hold keys
-- done() prints one line, "BENCH requests=N", that deploy/dev/bench reads.

local mode = os.getenv("COST_MODE") or "default"
local limit = tonumber(os.getenv("COST_LIMIT") or "100000")
local REPEAT_PROBABILITY = 0.25
local RECENT = 256

local recent, recent_count, recent_next = {}, 0, 0
local counter, share, last = 0, 0, nil

local threads, thread_count = {}, 0
function setup(thread)
    thread_count = thread_count + 1
    thread:set("thread_id", thread_count)
    table.insert(threads, thread)
end

function init(args)
    math.randomseed(os.time() * 7919 + (thread_id or 0) * 104729)
    wrk.method = "POST"
    wrk.path = "/v1/sends"
    wrk.headers["Content-Type"] = "application/json"
    -- Every thread takes its own block of numbers; 2 threads by default (-t2).
    share = math.floor(limit / tonumber(os.getenv("COST_THREADS") or "2"))
end

local function random_phone()
    if recent_count > 0 and math.random() < REPEAT_PROBABILITY then
        return recent[math.random(math.min(recent_count, RECENT))]
    end
    local phone = string.format("+86138%08d", math.random(0, 99999999))
    recent_next = recent_next % RECENT + 1
    recent[recent_next] = phone
    recent_count = recent_count + 1
    return phone
end

function request()
    if mode == "distinct" then
        if counter < share then
            counter = counter + 1
            last = string.format("+86139%02d%06d", thread_id, counter)
        end
        return wrk.format(nil, nil, nil, '{"phone":"' .. last .. '"}')
    end
    local phone = random_phone()
    if mode == "rules" then
        local ip = string.format("10.%d.%d.%d", thread_id, math.random(0, 3), math.random(0, 255))
        local headers = { ["Content-Type"] = "application/json",
            ["Idempotency-Key"] = string.format("k%d-%d-%d", thread_id, math.random(0, 999999999), counter) }
        counter = counter + 1
        return wrk.format(nil, nil, headers, '{"phone":"' .. phone .. '","client_ip":"' .. ip .. '"}')
    end
    return wrk.format(nil, nil, nil, '{"phone":"' .. phone .. '"}')
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("BENCH requests=%d duration_us=%d errors=%d non2xx=%d\n",
        summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status))
end
