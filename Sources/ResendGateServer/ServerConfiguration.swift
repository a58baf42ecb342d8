import Foundation
import GateRuntime

/// How the HTTP server listens, authenticates and protects itself.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; `HTTPServer.port` tells which.
    public var port: Int
    /// Event loops, each with its own listener (`SO_REUSEPORT`) and Redis connection.
    public var workers: Int
    /// Bearer keys with their scopes; empty: every route open (loopback only, unless insecure).
    public var apiKeys: [APIKey]
    /// Allow a non-loopback host without API keys.
    public var insecureNoAuth: Bool
    public var maxBodyBytes: Int
    public var maxHeaderBytes: Int
    /// How long a request may take to arrive (from its first byte), a connection stay
    /// idle, and an answer go unread; not while a request is served (Redis's timeout is).
    public var connectionTimeout: Duration
    /// Open connections per worker; past it the oldest idle one is closed. By default
    /// ``ConnectionBudget/defaultPerWorker``.
    public var maxConnectionsPerWorker: Int
    /// What all connections may hold, in bytes (``ConnectionMemoryBudget``).
    public var connectionMemoryBytes: Int
    public var logLevel: LogLevel
    /// How long SIGTERM waits for requests in flight.
    public var drainTimeout: Duration
    /// What `POST /v1/sends` answers when Redis cannot record a send.
    public var onStoreFailure: StoreFailureMode
    /// The browser origins (normalised) whose pages may send mutating requests; nil: `ownOrigins`.
    public var allowOrigins: [String]?
    /// How often an event stream gets a `: heartbeat` line, so proxies keep it open. No
    /// option: tests shorten it.
    public var streamHeartbeatInterval: Duration = .seconds(15)

    /// Loopback: without API keys nothing else is allowed.
    public static let defaultHost = "127.0.0.1"
    public static let defaultPort = 8080
    public static let portRange = 0...65535
    /// One event loop per core.
    public static let defaultWorkers = ProcessInfo.processInfo.activeProcessorCount
    public static let workersRange = 1...256
    public static let defaultConnectionTimeout: Duration = .seconds(10)
    public static let defaultLogLevel = LogLevel.info
    public static let defaultDrainTimeout: Duration = .seconds(5)
    /// Closed: never allow a send Redis did not record.
    public static let defaultOnStoreFailure = StoreFailureMode.closed

    public init(
        host: String = ServerConfiguration.defaultHost, port: Int = ServerConfiguration.defaultPort,
        workers: Int = ServerConfiguration.defaultWorkers, apiKeys: [APIKey] = [], insecureNoAuth: Bool = false,
        maxBodyBytes: Int = 16 * 1024, maxHeaderBytes: Int = 8 * 1024,
        connectionTimeout: Duration = ServerConfiguration.defaultConnectionTimeout, maxConnectionsPerWorker: Int? = nil,
        connectionMemoryBytes: Int = ConnectionMemoryBudget.defaultTotal,
        logLevel: LogLevel = ServerConfiguration.defaultLogLevel, drainTimeout: Duration = ServerConfiguration.defaultDrainTimeout,
        onStoreFailure: StoreFailureMode = ServerConfiguration.defaultOnStoreFailure, allowOrigins: [String]? = nil
    ) throws(ConfigurationError) {
        let ranges = [("port", port, Self.portRange), ("workers", workers, Self.workersRange)]
        for (field, value, range) in ranges where !range.contains(value) {
            throw ConfigurationError(field: field, message: "must be \(range)")
        }
        guard connectionMemoryBytes >= 1 << 20 else {
            throw ConfigurationError(field: "max-connection-memory", message: "must be at least 1 (MiB)")
        }
        self.maxConnectionsPerWorker = maxConnectionsPerWorker
            ?? ConnectionBudget(workers: workers, connectionMemory: connectionMemoryBytes).defaultPerWorker
        guard self.maxConnectionsPerWorker > 0 else {
            throw ConfigurationError(field: "max-connections", message: "must be at least 1")
        }
        if apiKeys.isEmpty && !insecureNoAuth && !Self.isLoopback(host) {
            throw ConfigurationError(
                field: "host",
                message: "\(host) is not a loopback address and no API keys are set: add API keys, or expose the gate without keys on purpose",
                remedies: ["api-keys-file", "api-keys", "insecure-no-auth"])
        }
        for key in apiKeys.map(\.secret) where key.utf8.count < 16 || key.contains(where: { $0 == " " || $0 == "\t" }) {
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
        self.connectionMemoryBytes = connectionMemoryBytes
        self.logLevel = logLevel
        self.drainTimeout = drainTimeout
        self.onStoreFailure = onStoreFailure
        for origin in allowOrigins ?? [] where Self.normalisedOrigin(origin) == nil {
            throw ConfigurationError(
                field: "allow-origins",
                message: "\"\(origin)\" is not an origin: write scheme://host[:port], such as https://app.example.com, with no path")
        }
        self.allowOrigins = allowOrigins?.compactMap(Self.normalisedOrigin)  // every one valid, checked above
    }

    /// Whether `Host` must be a loopback name (DNS rebinding): no API keys, on loopback.
    var checksHost: Bool { apiKeys.isEmpty && Self.isLoopback(host) }

    /// The origins whose pages may send mutating requests, once the port is known.
    func allowedOrigins(port: Int) -> [String] {
        allowOrigins ?? Self.ownOrigins(host: host, port: port)
    }

    /// Its loopback names on `port`, and `host` when it is one address (not 0.0.0.0).
    public static func ownOrigins(host: String, port: Int) -> [String] {
        var origins = ["http://127.0.0.1:\(port)", "http://localhost:\(port)", "http://[::1]:\(port)"]
        if !["0.0.0.0", "::", ""].contains(host), let own = normalisedOrigin("http://\(host.contains(":") ? "[\(host)]" : host):\(port)"),
           !origins.contains(own) {
            origins.append(own)
        }
        return origins
    }

    /// `text` as browsers write an `Origin`: lower-case scheme and host, no default
    /// port, no trailing slash; nil when it is not `http(s)://host[:port]`.
    public static func normalisedOrigin(_ text: String) -> String? {
        var rest = Substring(text.lowercased())
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let scheme = ["http", "https"].first(where: { rest.hasPrefix("\($0)://") }) else { return nil }
        rest = rest.dropFirst(scheme.count + 3)
        // A name or IPv4 address, or an IPv6 address in brackets; then `:port` or nothing.
        let hostEnd = rest.hasPrefix("[") ? rest.firstIndex(of: "]").map(rest.index(after:)) : rest.firstIndex(of: ":") ?? rest.endIndex
        guard let hostEnd else { return nil }
        let host = rest[..<hostEnd]
        var port = rest[hostEnd...]
        let bracketed = host.hasPrefix("[")
        let inner = bracketed ? host.dropFirst().dropLast() : host
        guard !inner.isEmpty, inner.allSatisfy({ character in
            bracketed ? character.isHexDigit || character == ":" || character == "."
                : character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == ".")
        }) else { return nil }
        if !port.isEmpty {
            let digits = port.dropFirst()
            guard port.first == ":", (1...5).contains(digits.count), digits.allSatisfy(\.isWholeNumber), let number = Int(digits),
                  (1...65535).contains(number) else { return nil }
            if (scheme == "http" && number == 80) || (scheme == "https" && number == 443) { port = "" } else { port = ":\(number)" }
        }
        return "\(scheme)://\(host)\(port)"
    }

    /// `localhost`, or an address in 127.0.0.0/8, `::1` or `::ffff:127.x.y.z`, parsed, never
    /// prefix-matched: `127.example.com` may resolve anywhere, so it needs API keys.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let loopback = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
        let mappedLoopback = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        return loopback || mappedLoopback
    }
}

/// What a send gets while Redis is unreachable or too slow.
public enum StoreFailureMode: String, Sendable, CaseIterable {
    /// 503 `store_unavailable`: no send is ever allowed that Redis did not record (the default).
    case closed
    /// 200 allowed, marked `"store": "unavailable"` and `X-Resendgate-Store: unavailable`.
    /// Risk: with no cooldown and no caps, whoever stalls Redis gets any number of SMS.
    case open
}

/// How much the server logs on stderr.
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, warning, error, off

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}
