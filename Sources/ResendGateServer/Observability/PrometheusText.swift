import RedisClient
import ResendGate

/// Renders the workers' metrics in the Prometheus text exposition format.
enum PrometheusText {
    static func render(_ workers: [WorkerMetrics], redis: [RedisStatistics]) -> String {
        func sum(_ counter: WorkerMetrics.Counter) -> Int64 { workers.reduce(0) { $0 + $1.value(counter) } }
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples { out += "\(name)\(labels) \(value)\n" }
        }
        func single(_ name: String, _ type: String, _ help: String, _ value: some BinaryInteger) {
            metric(name, type, help, [("", "\(value)")])
        }
        metric("resendgate_build_info", "gauge", "The running version (docs/changelog.md); always 1.", [
            ("{version=\"\(ResendGateVersion.current)\"}", "1"),
        ])
        metric("resendgate_decisions_total", "counter", "Send decisions by outcome and reason.", [
            ("{outcome=\"allowed\",reason=\"\"}", "\(sum(.allowed))"),
            ("{outcome=\"allowed\",reason=\"store_unavailable\"}", "\(sum(.allowedUnrecorded))"),
            ("{outcome=\"allowed\",reason=\"test_number\"}", "\(sum(.allowedTestNumber))"),
            ("{outcome=\"denied\",reason=\"region_not_allowed\"}", "\(sum(.deniedRegion))"),
            ("{outcome=\"denied\",reason=\"number_type_not_allowed\"}", "\(sum(.deniedNumberType))"),
        ] + [false, true].flatMap { observed in
            // Every reason's refusals, and the would-be ones of those a policy may observe.
            DecisionReason.allCases.filter { !observed || $0.row.observable }.map { reason in
                ("{outcome=\"\(observed ? "observed" : "denied")\",reason=\"\(reason.rawValue)\"}",
                 "\(workers.reduce(0) { $0 + $1.value(reason, observed: observed) })")
            }
        })
        let byCallingCode = CallingCodeCounters.samples(workers.map(\.callingCodes))
        metric("resendgate_sends_by_calling_code_total", "counter", "Allowed sends by the number's country calling code (conversion: the rate of resendgate_verifications_by_calling_code_total over this one's).", byCallingCode.sends)
        metric("resendgate_verifications_by_calling_code_total", "counter", "Verified outcomes (POST /v1/verifications) by the number's country calling code.", byCallingCode.verifications)
        metric("resendgate_http_requests_total", "counter", "HTTP requests answered, by status class.", [
            ("{class=\"2xx\"}", "\(sum(.requests2xx))"),
            ("{class=\"4xx\"}", "\(sum(.requests4xx))"),
            ("{class=\"5xx\"}", "\(sum(.requests5xx))"),
        ])
        single("resendgate_http_requests_in_flight", "gauge", "Requests received and not yet answered.", sum(.inFlight))
        single("resendgate_http_connections_open", "gauge", "Client connections open now.", sum(.openConnections))
        single("resendgate_http_connections_evicted_total", "counter", "Idle connections closed to make room at the connection cap or when file descriptors ran out.", sum(.evictedConnections))
        single("resendgate_http_connections_shed_total", "counter", "Connections closed because a worker's connections held more than its share of the connection memory budget.", sum(.shedConnections))
        single("resendgate_http_connection_memory_bytes", "gauge", "What client connections hold (connection state, request buffers, unsent answers and stream frames), sampled every 200 ms.", sum(.connectionMemoryBytes))
        single("resendgate_http_accept_failures_total", "counter", "accept() calls that failed (out of file descriptors): each paused the listener for a moment.", sum(.acceptPauses))
        single("resendgate_http_answers_queued_total", "counter", "Answers the socket could not take at once (slow or pipelining clients).", sum(.answersQueued))
        single("resendgate_sse_streams", "gauge", "Open server-sent event streams of countdowns.", sum(.sseStreams))
        single("resendgate_sse_followed_cooldowns", "gauge", "Cooldowns whose release open streams wait for.", sum(.sseFollowedCooldowns))
        single("resendgate_sse_released_total", "counter", "Streams ended early by a release, on any gate.", sum(.sseReleased))
        single("resendgate_sse_evicted_total", "counter", "Streams closed, with their shutdown event, to make room: past the streams of one token or of one worker, or at the connection cap.", sum(.sseEvicted))
        single("resendgate_http_requests_too_slow_total", "counter", "Connections closed by the request deadline: a request still arriving --connection-timeout after its first byte (a client silent that long is closed by the idle timeout instead, not counted here).", sum(.lateRequests))
        var cumulative: Int64 = 0
        let buckets = (WorkerMetrics.latencyBuckets.map { "\($0)" } + ["+Inf"]).enumerated().map { index, bound in
            cumulative += workers.reduce(0) { $0 + $1.bucketCount(index) }
            return ("_bucket{le=\"\(bound)\"}", "\(cumulative)")
        }
        metric("resendgate_http_request_duration_seconds", "histogram", "Time from request to response.", buckets + [
            ("_sum", "\(Double(sum(.latencySumMicroseconds)) / 1_000_000)"), ("_count", "\(sum(.latencyCount))"),
        ])
        single("resendgate_redis_up", "gauge", "Worker connections to Redis that are ready.", redis.filter(\.isReady).count)
        single("resendgate_redis_evicting", "gauge", "Worker connections whose Redis may evict keys (maxmemory-policy not noeviction; any master on a cluster).", redis.filter(\.evictsKeys).count)
        single("resendgate_redis_errors_total", "counter", "Redis errors: failed connects, timeouts, error replies (not a cluster's redirections).", redis.reduce(0) { $0 + $1.errorCount })
        metric("resendgate_redis_redirects_total", "counter", "Redis Cluster redirections followed or retried: MOVED (a slot's new owner), ASK and TRYAGAIN (a slot being migrated).",
            RedisStatistics.Redirect.allCases.map { kind in ("{kind=\"\(kind.rawValue)\"}", "\(redis.reduce(0) { $0 + $1.redirectCount(kind) })") })
        single("resendgate_redis_reconnects_total", "counter", "Reconnection attempts to Redis.", redis.reduce(0) { $0 + $1.reconnectCount })
        return out
    }
}
