extension RedisServer {
    /// How to start a test Redis. Every field has a default that suits most tests.
    public struct Options: Sendable {
        /// When Redis fsyncs the append-only file (`appendfsync`).
        public enum AppendFsync: String, Sendable {
            /// Fsync after every write: a crash forgets nothing (slowest).
            case always
            /// Fsync once a second: a crash can forget up to a second of writes.
            case everysec
            /// Leave it to the OS.
            case no
        }

        /// `appendonly yes`: writes go to an AOF in the server's directory and survive `restart()`.
        public var appendOnly: Bool
        /// `appendfsync`, used when `appendOnly` is on. Use `.always` to make a `kill()` lose nothing.
        public var appendFsync: AppendFsync
        /// Also listen on `<directory>/redis.sock` (see `unixSocketPath`).
        public var unixSocket: Bool
        /// `requirepass`: clients must `AUTH` with it.
        public var password: String?
        /// Extra `redis.conf` lines appended verbatim (for example `"maxmemory 10mb"`).
        public var extraConfiguration: [String]

        public init(
            appendOnly: Bool = false,
            appendFsync: AppendFsync = .everysec,
            unixSocket: Bool = false,
            password: String? = nil,
            extraConfiguration: [String] = []
        ) {
            self.appendOnly = appendOnly
            self.appendFsync = appendFsync
            self.unixSocket = unixSocket
            self.password = password
            self.extraConfiguration = extraConfiguration
        }
    }
}

// MARK: - redis.conf

extension RedisServer.Options {
    /// The configuration file for a server on `port` in `directory`.
    func configuration(port: Int, directory: String, redisMajorVersion: Int) -> String {
        var lines = [
            "# written by ResendGateTestSupport.RedisServer",
            "bind 127.0.0.1",
            "protected-mode yes",
            "port \(port)",
            "tcp-backlog 128",
            "daemonize no",
            "supervised no",
            "dir \(quoted(directory))",
            "logfile \(quoted(directory + "/redis.log"))",
            "pidfile \(quoted(directory + "/redis.pid"))",
            "save \"\"",
            "appendonly \(appendOnly ? "yes" : "no")",
            "appendfsync \(appendFsync.rawValue)",
            "maxmemory-policy noeviction",
        ]
        if redisMajorVersion >= 7 {
            lines.append("enable-debug-command local")  // DEBUG SLEEP for timeout tests; off by default since 7.0
        }
        if unixSocket {
            lines += ["unixsocket \(quoted(directory + "/redis.sock"))", "unixsocketperm 700"]
        }
        if let password {
            lines.append("requirepass \(quoted(password))")
        }
        lines += extraConfiguration
        return lines.joined(separator: "\n") + "\n"
    }

    private func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
