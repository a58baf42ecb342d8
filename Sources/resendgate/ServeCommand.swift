import Foundation
import ResendGate
import ResendGateServer

/// `resendgate serve`: the HTTP server.
enum ServeCommand {
    static let summary = """
        Run the HTTP server (CONTRACT.md). Without API keys it listens on loopback only, and answers
        only requests whose Host is localhost, 127.0.0.1 or [::1] (else 421: DNS rebinding).
        A POST or DELETE from a web page whose Origin is not in --allow-origins is 403, with or
        without API keys; POST /v1/sends needs Content-Type: application/json (else 415).
        SIGTERM or SIGINT stops accepting, ends every event stream with a shutdown event (retry: 1000),
        lets requests in flight finish (at most 5 s), then exits 0.
        """

    static let options: [Settings.Option] = [
        Settings.Option(name: "host", defaultValue: "127.0.0.1", help: "address to listen on"),
        Settings.Option(name: "port", defaultValue: "8080", help: "port to listen on (0 picks a free one)"),
        Settings.Option(name: "workers", defaultValue: String(ProcessInfo.processInfo.activeProcessorCount),
                        help: "event loops, each with its own listener and Redis connection; the default is this machine's number of cores"),
        Settings.Option(name: "api-keys-file", defaultValue: nil,
                        help: "file with one API key a line, '#' starts a comment: 'KEY' may send and read; 'KEY send,read,release' names its scopes (send: POST /v1/sends, read: GET /v1/cooldowns, release: DELETE /v1/cooldowns)"),
        Settings.Option(name: "api-keys", defaultValue: nil,
                        help: "API keys separated by commas; each may send and read, not release (scopes only in --api-keys-file)"),
        Settings.Option(name: "insecure-no-auth", defaultValue: nil,
                        help: "allow a non-loopback --host without API keys: anyone who can reach it can reserve and release", isFlag: true),
        Settings.Option(name: "allow-origins", defaultValue: nil,
                        help: "web origins (scheme://host[:port], comma-separated) whose pages may send anything but GET and HEAD; others get 403 forbidden; unset, the gate's own: http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT"),
        Settings.Option(name: "log-level", defaultValue: "info", help: "debug, info, warning, error or off: requests and Redis events (reconnects, failovers), never a phone number"),
        Settings.Option(name: "max-connections", defaultValue: "auto",
                        help: "open connections per worker, past which the oldest idle one is closed; auto: the lower of what RLIMIT_NOFILE leaves after Redis, listeners and logs and what --max-connection-memory allows (about 2 KiB an idle connection, for half of it), shared among the workers"),
        Settings.Option(name: "max-connection-memory", defaultValue: "16",
                        help: "MiB that all client connections may make the server hold together (state, headers, bodies, unsent answers), an even share per worker; past it, connections stuck with unsent bytes (most first), then the oldest idle ones, are closed"),
        Settings.Option(name: "connection-timeout", defaultValue: "10s",
                        help: "how long a connection may stay silent: sending its request, reading its response (or stuck with it unread), or idle"),
        Settings.Option(name: "on-store-failure", defaultValue: "closed",
                        help: "when Redis cannot record a send: closed answers 503; open allows it unrecorded (RISK: no cooldown or caps while Redis is down)"),
    ]

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        let all = options + Settings.common
        let settings = try Settings(arguments: arguments, environment: environment, options: all)
        if settings.helpRequested {
            print(Settings.help(usage: "resendgate serve [options]", summary: summary, options: all))
            return .success
        }
        guard settings.positional.isEmpty else { throw UsageError("serve takes no arguments, got \(settings.positional[0])") }
        guard let level = LogLevel(rawValue: settings["log-level"] ?? "") else {
            throw ConfigurationError(field: "log-level", message: "use one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let onStoreFailure = StoreFailureMode(rawValue: settings["on-store-failure"] ?? "") else {
            throw ConfigurationError(field: "on-store-failure", message: "use closed or open")
        }
        let workers = try settings.integer("workers", in: 1...256)
        let connectionMemory = try settings.integer("max-connection-memory", in: 1...65_536) << 20
        let budget = ConnectionBudget(workers: workers, connectionMemory: connectionMemory)
        let derivedCap = settings["max-connections"] == "auto"
        let maxConnections = derivedCap ? budget.defaultPerWorker : try settings.integer("max-connections", in: 1...1_000_000)
        let configuration = try ServerConfiguration(
            host: settings["host"] ?? "127.0.0.1",
            port: try settings.integer("port", in: 0...65535),
            workers: workers,
            apiKeys: try apiKeys(settings),
            insecureNoAuth: settings.flag("insecure-no-auth"),
            connectionTimeout: try settings.duration("connection-timeout"),
            maxConnectionsPerWorker: maxConnections, connectionMemoryBytes: connectionMemory,
            logLevel: level, onStoreFailure: onStoreFailure, allowOrigins: allowOrigins(settings))
        let server = try HTTPServer(configuration: configuration, gate: try settings.gateConfiguration())
        let displayHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        printError("listening on http://\(displayHost):\(server.port) with \(configuration.workers) workers, Redis \(settings["redis"] ?? "")")
        printError(budget.summary(perWorker: maxConnections, derived: derivedCap))
        printError(ConnectionMemoryBudget(workers: workers, total: connectionMemory).summary)
        let origins = server.allowedOrigins.isEmpty ? "none" : server.allowedOrigins.joined(separator: ", ")
        printError("web pages allowed to send POST or DELETE: \(origins)")
        await waitForTermination()
        server.shutdown()
        printError("stopped")
        return .success
    }

    /// `--allow-origins`: nil when unset (the gate's own origins); an empty value allows none.
    private static func allowOrigins(_ settings: Settings) -> [String]? {
        settings["allow-origins"].map { list in
            list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }

    /// The keys of `--api-keys-file` (with the scopes each line names) and of
    /// `--api-keys` (bare keys: send and read). An unknown scope stops the start (exit 2).
    private static func apiKeys(_ settings: Settings) throws -> [APIKey] {
        var keys: [APIKey] = []
        if let path = settings["api-keys-file"], !path.isEmpty {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError(field: "api-keys-file", message: "cannot read \(path)")
            }
            keys += try APIKey.parseFile(text)
        }
        if let list = settings["api-keys"] {
            keys += list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { APIKey($0) }
        }
        return keys
    }

    /// Returns when SIGTERM or SIGINT arrives.
    private static func waitForTermination() async {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let queue = DispatchQueue(label: "resendgate.signals")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            var sources: [DispatchSourceSignal] = []
            for number in [SIGTERM, SIGINT] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume() }
                }
                source.resume()
                sources.append(source)
            }
            SignalSources.keep(sources)
        }
    }
}

/// Keeps the signal sources alive for the life of the process.
private enum SignalSources {
    nonisolated(unsafe) static var sources: [DispatchSourceSignal] = []
    static func keep(_ new: [DispatchSourceSignal]) { sources = new }
}

private final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false
    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if claimed { return false }
        claimed = true
        return true
    }
}
