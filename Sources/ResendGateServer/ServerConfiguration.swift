import ResendGate

/// How the HTTP server listens, authenticates and protects itself.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; `HTTPServer.port` tells which.
    public var port: Int
    /// Event loops, each with its own listener (`SO_REUSEPORT`) and Redis connection.
    public var workers: Int
    /// Bearer keys; empty means no authentication (loopback only, unless insecure).
    public var apiKeys: [String]
    /// Allow a non-loopback host without API keys.
    public var insecureNoAuth: Bool
    public var maxBodyBytes: Int
    public var maxHeaderBytes: Int
    /// How long a connection may stay silent: while sending its request, reading
    /// its response, or idle between requests (libevent 2.1 has one timeout for all).
    /// It pauses while the request is served (each Redis step bounded by Redis's timeout).
    public var connectionTimeout: Duration
    /// Open connections per worker; past it the oldest idle one is closed to make room.
    /// By default what the open-file limit leaves (``ConnectionBudget``).
    public var maxConnectionsPerWorker: Int
    public var logLevel: LogLevel
    /// How long SIGTERM waits for requests in flight.
    public var drainTimeout: Duration
    /// What `POST /v1/sends` answers when Redis cannot record a send.
    public var onStoreFailure: StoreFailureMode
    /// How often an open event stream gets a `: heartbeat` comment line, which keeps
    /// proxies from closing a quiet stream. Not a command-line option (tests shorten it).
    public var streamHeartbeatInterval: Duration = .seconds(15)

    public init(
        host: String = "127.0.0.1", port: Int = 8080, workers: Int = 1, apiKeys: [String] = [],
        insecureNoAuth: Bool = false, maxBodyBytes: Int = 16 * 1024, maxHeaderBytes: Int = 8 * 1024,
        connectionTimeout: Duration = .seconds(10),
        maxConnectionsPerWorker: Int? = nil, logLevel: LogLevel = .info, drainTimeout: Duration = .seconds(5),
        onStoreFailure: StoreFailureMode = .closed
    ) throws(ConfigurationError) {
        guard (0...65535).contains(port) else { throw ConfigurationError(field: "port", message: "must be 0...65535") }
        guard (1...256).contains(workers) else { throw ConfigurationError(field: "workers", message: "must be 1...256") }
        let maxConnectionsPerWorker = maxConnectionsPerWorker ?? ConnectionBudget(workers: workers).defaultPerWorker
        guard maxConnectionsPerWorker > 0 else {
            throw ConfigurationError(field: "max-connections", message: "must be at least 1")
        }
        if apiKeys.isEmpty && !insecureNoAuth && !Self.isLoopback(host) {
            throw ConfigurationError(
                field: "host",
                message: "\(host) is not a loopback address and no API keys are set: add --api-keys-file or RESENDGATE_API_KEYS, or pass --insecure-no-auth to expose the gate without keys")
        }
        for key in apiKeys where key.utf8.count < 16 || key.contains(where: { $0 == " " || $0 == "\t" }) {
            throw ConfigurationError(field: "api-keys", message: "every API key needs at least 16 characters and no spaces")
        }
        self.host = host
        self.port = port
        self.workers = workers
        self.apiKeys = apiKeys
        self.insecureNoAuth = insecureNoAuth
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.connectionTimeout = connectionTimeout
        self.maxConnectionsPerWorker = maxConnectionsPerWorker
        self.logLevel = logLevel
        self.drainTimeout = drainTimeout
        self.onStoreFailure = onStoreFailure
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// What a send gets while Redis is unreachable or too slow.
public enum StoreFailureMode: String, Sendable, CaseIterable {
    /// 503 `store_unavailable`: no send is ever allowed that Redis did not record (the default).
    case closed
    /// 200 allowed, marked `"store": "unavailable"` and `X-Resendgate-Store: unavailable`.
    /// Risk: while Redis is down every request is allowed, with no cooldown and no caps, so
    /// whoever can stall Redis can make the gate approve any number of SMS.
    case open
}

/// How much the server logs on stderr.
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warning, error, off

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}
