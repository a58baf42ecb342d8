import GateRuntime
/// Where and how to reach Redis.
public struct RedisConfiguration: Sendable, Equatable {
    /// How to reach the server.
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unix(path: String)
        /// A Redis Cluster, found from any of these nodes.
        case cluster(seeds: [HostPort])
        /// The master that these Sentinels name `master`.
        case sentinel(sentinels: [HostPort], master: String)
    }

    /// A node's address.
    public struct HostPort: Sendable, Hashable, CustomStringConvertible {
        public let host: String
        public let port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Reads `host:port` or `[ipv6]:port`, or, when `defaultPort` is given, a bare
        /// `host` or `[ipv6]`; nil when the host is empty or the port is not in 1...65535.
        /// The one reader of an address in the package (URLs, lists, cluster redirects).
        public init?(authority: Substring, defaultPort: Int? = nil) {
            let host: Substring
            var portText: Substring?
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return nil }
                host = authority[authority.index(after: authority.startIndex)..<close]
                let after = authority[authority.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { return nil }
                    portText = after.dropFirst()
                }
            } else if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty, let port = portText.map({ Int($0) }) ?? defaultPort, (1...65535).contains(port) else {
                return nil
            }
            self.init(host: String(host), port: port)
        }

        /// Reads `host:port,host:port` (the form of `--redis-cluster` and `--redis-sentinel`).
        public static func parseList(_ text: String, field: String) throws(ConfigurationError) -> [HostPort] {
            var nodes: [HostPort] = []
            for part in text.split(separator: ",").map({ String($0).trimmingSpaces }) where !part.isEmpty {
                guard let node = HostPort(authority: Substring(part)) else {
                    throw ConfigurationError(field: field, message: "\"\(part)\" is not host:port")
                }
                nodes.append(node)
            }
            guard !nodes.isEmpty else { throw ConfigurationError(field: field, message: "needs at least one host:port") }
            return nodes
        }

        public var description: String { "\(host):\(port)" }
    }

    public var endpoint: Endpoint
    public var username: String?
    public var password: String?
    public var database: Int
    /// How long a connection (with AUTH, SELECT and script loading) may take.
    public var connectTimeout: Duration
    /// How long a command may wait for its reply before it fails as unavailable.
    public var commandTimeout: Duration
    /// The first and the longest wait between reconnection attempts.
    public var reconnectBackoff: ClosedRange<Duration>
    /// Serve from a Redis whose `maxmemory-policy` may evict keys (anything but
    /// `noeviction`). Off by default: an evicted cooldown is a second code sent at once,
    /// so such a Redis gets no command and the gate answers `store_evicts_keys`.
    public var allowEvictingRedis = false
    /// How often a ready connection reads `maxmemory-policy` again (`INFO memory`), besides
    /// at every connect: the policy can change live (`CONFIG SET`).
    public var evictionCheckInterval: Duration = RedisConfiguration.defaultEvictionCheckInterval
    /// False for a connection to a Sentinel, which stores no keys and has no `maxmemory-policy`.
    var readsEvictionPolicy = true

    /// The default local Redis: `redis://127.0.0.1:6379/0`.
    public static let defaultURL = "redis://127.0.0.1:6379/0"
    /// The connect and command timeout: past it a decision is "store unavailable".
    public static let defaultTimeout: Duration = .seconds(1)
    /// The first and the longest wait between reconnection attempts.
    public static let defaultReconnectBackoff: ClosedRange<Duration> = .milliseconds(25) ... .milliseconds(500)
    /// How often `maxmemory-policy` is read again while a connection is up.
    public static let defaultEvictionCheckInterval: Duration = .seconds(5)
    /// The master name Sentinels are asked for unless told otherwise (Redis's own example name).
    public static let defaultSentinelMaster = "mymaster"

    /// The answer to a `rediss://` URL (issue 34, finding 7): Debian 12's hiredis (0.14) has
    /// no TLS, so the gate speaks TLS through a local stunnel, which the message points to.
    static let tlsUnsupported = ConfigurationError(
        field: "redis",
        message: "rediss:// (TLS) is not supported: this build's hiredis has no TLS; run a client-mode stunnel on "
            + "loopback in front of the TLS Redis and give the gate its redis:// address (docs/operations.md#tls-to-redis)")

    /// Reads `redis://[user:password@]host:port/db` or `unix:///path/to/redis.sock`
    /// (`unix:///path?db=1` selects a database).
    public init(
        url: String,
        connectTimeout: Duration = RedisConfiguration.defaultTimeout,
        commandTimeout: Duration = RedisConfiguration.defaultTimeout,
        reconnectBackoff: ClosedRange<Duration> = RedisConfiguration.defaultReconnectBackoff
    ) throws(ConfigurationError) {
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.reconnectBackoff = reconnectBackoff
        guard connectTimeout > .zero, commandTimeout > .zero else {
            throw ConfigurationError(field: "redis-timeout", message: "timeouts must be greater than zero")
        }
        let invalid = ConfigurationError(
            field: "redis",
            message: "\"\(url)\" is not a Redis URL (redis://[user:password@]host:port/db or unix:///path)")
        if url.hasPrefix("unix://") {
            var rest = Substring(url.dropFirst("unix://".count))
            database = 0
            if let query = rest.firstIndex(of: "?") {
                let params = rest[rest.index(after: query)...]
                rest = rest[..<query]
                for pair in params.split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    if parts.count == 2, parts[0] == "db", let db = Int(parts[1]), db >= 0 { database = db } else { throw invalid }
                }
            }
            guard rest.hasPrefix("/"), rest.count > 1 else { throw invalid }
            endpoint = .unix(path: String(rest))
            return
        }
        if url.lowercased().hasPrefix("rediss://") { throw Self.tlsUnsupported }
        guard url.hasPrefix("redis://") else { throw invalid }
        var rest = Substring(url.dropFirst("redis://".count))
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            // Percent-encoded (a literal % is %25): malformed encoding is refused, not guessed at.
            func decoded(_ text: Substring) throws(ConfigurationError) -> String {
                guard let text = PercentDecoding.decode(text) else {
                    throw ConfigurationError(field: "redis", message: "the user or password is not valid percent-encoding (write % as %25)")
                }
                return text
            }
            if let colon = credentials.firstIndex(of: ":") {
                let user = try decoded(credentials[..<colon])
                username = user.isEmpty ? nil : user
                password = try decoded(credentials[credentials.index(after: colon)...])
            } else {
                password = try decoded(credentials)
            }
        }
        var hostPort = rest
        database = 0
        if let slash = rest.firstIndex(of: "/") {
            hostPort = rest[..<slash]
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard let number = Int(db), number >= 0 else { throw invalid }
                database = number
            }
        }
        guard let node = HostPort(authority: hostPort, defaultPort: 6379) else { throw invalid }
        endpoint = .tcp(host: node.host, port: node.port)
    }
}

extension RedisConfiguration {
    /// The same settings for another endpoint (a cluster node, a resolved master).
    func with(endpoint: Endpoint) -> RedisConfiguration {
        var copy = self
        copy.endpoint = endpoint
        return copy
    }

    /// The timeouts for asking Sentinels, which get no user, password or database.
    var forSentinels: RedisConfiguration {
        var plain = self
        plain.username = nil
        plain.password = nil
        plain.database = 0
        plain.readsEvictionPolicy = false
        return plain
    }

    /// Settings for a Redis Cluster found from `seeds`; `base` gives the password and
    /// timeouts (clusters have only database 0).
    public static func cluster(seeds: [HostPort], base: RedisConfiguration) throws(ConfigurationError) -> RedisConfiguration {
        guard base.database == 0 else {
            throw ConfigurationError(field: "redis-cluster", message: "a Redis Cluster has only database 0")
        }
        return base.with(endpoint: .cluster(seeds: seeds))
    }

    /// Settings for the master that `sentinels` name `master`; `base` gives the
    /// master's password, database and timeouts.
    public static func sentinel(sentinels: [HostPort], master: String, base: RedisConfiguration) -> RedisConfiguration {
        base.with(endpoint: .sentinel(sentinels: sentinels, master: master))
    }
}
