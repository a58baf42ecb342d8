import Foundation
import GateRuntime
import ResendGate
import ResendGateServer

/// `resendgate serve`: the HTTP server.
enum ServeCommand {
    static let summary = """
        Run the HTTP server (its API: docs/API.md, deploy/openapi.yaml, GET /openapi.yaml).
        Without API keys it listens on loopback only, and answers only requests whose Host
        is localhost, 127.0.0.1 or [::1] (else 421: DNS rebinding).
        A POST or DELETE from a web page whose Origin is not in --allow-origins is 403, with or
        without API keys; a POST with a body (sends, checks, verifications) needs
        Content-Type: application/json (else 415).
        SIGTERM or SIGINT stops accepting, ends every event stream with a shutdown event (retry: 1000),
        lets requests in flight finish (at most \(DurationParser.format(ServerConfiguration.defaultDrainTimeout))), then exits 0.
        The table of these options in docs/configuration.md is what --help-markdown prints.
        """

    /// Every option of `serve`, in the order of `--help` and the table in docs/configuration.md.
    static var options: [Option] { Settings.serve + Settings.common }

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        let reading = try CommandLineReading(arguments: arguments, environment: environment, options: options)
        if reading.printHelpIfAsked(usage: "resendgate serve [options]", summary: summary) { return .success }
        guard reading.positional.isEmpty else { throw UsageError("serve takes no arguments, got \(reading.positional[0])") }
        let settings = try reading.settings()
        let connectionMemory = settings.maxConnectionMemoryMiB << 20
        let configuration = try ServerConfiguration(
            host: settings.host, port: settings.port, workers: settings.workers,
            apiKeys: try apiKeys(settings), insecureNoAuth: settings.insecureNoAuth,
            connectionTimeout: settings.connectionTimeout, maxConnectionsPerWorker: settings.maxConnections,
            connectionMemoryBytes: connectionMemory,
            logLevel: settings.logLevel, onStoreFailure: settings.onStoreFailure, allowOrigins: settings.allowOrigins)
        let server = try HTTPServer(configuration: configuration, gate: try settings.gateConfiguration())
        let displayHost = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        printError("listening on http://\(displayHost):\(server.port) with \(configuration.workers) workers, \(settings.redisSummary)")
        let budget = ConnectionBudget(workers: settings.workers, connectionMemory: connectionMemory)
        printError(budget.summary(perWorker: configuration.maxConnectionsPerWorker, derived: settings.maxConnections == nil))
        printError(ConnectionMemoryBudget(workers: settings.workers, total: connectionMemory).summary)
        let origins = server.allowedOrigins.isEmpty ? "none" : server.allowedOrigins.joined(separator: ", ")
        printError("web pages allowed to send POST or DELETE: \(origins)")
        await waitForTermination()
        server.shutdown()
        printError("stopped")
        return .success
    }

    /// The keys of `--api-keys-file` (with the scopes each line names) and of
    /// `--api-keys` (bare keys: send, read and verify). An unknown scope stops the start (exit 2).
    private static func apiKeys(_ settings: Settings) throws -> [APIKey] {
        var keys: [APIKey] = []
        if let path = settings.apiKeysFile {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError(field: "api-keys-file", message: "cannot read \(path)")
            }
            keys += try APIKey.parseFile(text)
        }
        keys += (settings.apiKeys ?? []).map { APIKey($0) }
        return keys
    }

    /// Returns when SIGTERM or SIGINT arrives; later ones are ignored (the server drains).
    private static func waitForTermination() async {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let (signals, arrived) = AsyncStream<Void>.makeStream()
        let queue = DispatchQueue(label: "resendgate.signals")
        let sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { arrived.yield() }
            source.resume()
            return source
        }
        for await _ in signals { break }
        for source in sources { source.cancel() }
    }
}
