import GateEventLoop
import ResendGate
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The resend gate over HTTP: one `Worker` per event loop.
public final class HTTPServer: Sendable {
    /// The port the server listens on (the real one when 0 was asked for).
    public let port: Int
    public let configuration: ServerConfiguration
    private nonisolated(unsafe) let workers: [Worker]
    private let loops: [EventLoop]
    private let shutDown = Atomic<Bool>(false)

    /// The origins whose pages may send mutating requests (`--allow-origins`, or its own).
    public var allowedOrigins: [String] { configuration.allowedOrigins(port: port) }

    /// Starts every worker; returns once connections are accepted. Ignores SIGPIPE for the
    /// process: a write to a client that left must fail, not end the process.
    public init(configuration: ServerConfiguration, gate: GateConfiguration) throws(ConfigurationError) {
        signal(SIGPIPE, SIG_IGN)
        // Issued codes are answered to whoever may send: with no key on a public address,
        // that would be anyone who reaches the gate.
        if configuration.apiKeys.isEmpty, configuration.insecureNoAuth, !ServerConfiguration.isLoopback(configuration.host),
           let purpose = gate.policies.configuredPurposes.sorted().first(where: { (gate.policies.purposes[$0] ?? gate.policies.fallback).codes != nil }) {
            throw ConfigurationError(
                field: "insecure-no-auth",
                message: "purpose \(purpose) issues codes, which a send's answer carries: a gate without API keys on a public address would show them to anyone; give it API keys")
        }
        self.configuration = configuration
        let loops = (0..<configuration.workers).map { EventLoop.startThread(name: "resendgate-worker-\($0)") }
        // One count of --ip-max-requests for the whole process, as nginx's limit_req zone.
        let requestLimiter = gate.ipMaxRequests.map { RequestLimiter(rate: $0) }
        let workers = loops.enumerated().map { index, loop in
            loop.submitAndWait { Worker(index: index, loop: loop, configuration: configuration, gate: gate, requestLimiter: requestLimiter) }
        }
        let shared = SharedState(
            metrics: workers.map(\.metrics), redis: workers.map(\.gate.store.statistics), apiKeys: configuration.apiKeys)
        var port = configuration.port
        for (worker, loop) in zip(workers, loops) {
            nonisolated(unsafe) let worker = worker  // loop-confined: used on its own loop's thread only
            do {
                port = try loop.submitAndWait { [port] () throws(ConfigurationError) -> Int in
                    worker.shared = shared
                    return try worker.start(port: port)
                }
            } catch {
                Self.drain(workers, loops, until: .now)  // what started: closed at once
                throw error
            }
        }
        self.port = port
        self.workers = workers
        self.loops = loops
    }

    /// Stops accepting, lets requests in flight finish (up to the drain timeout), then
    /// closes every connection. Only the first call acts: a job sent to a stopped loop
    /// would never run, and would keep its worker forever.
    public func shutdown() {
        guard !shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Self.drain(workers, loops, until: .now + configuration.drainTimeout)
    }

    /// `Worker.drain` on each loop; returns once every loop has stopped.
    private static func drain(_ workers: [Worker], _ loops: [EventLoop], until deadline: ContinuousClock.Instant) {
        for (worker, loop) in zip(workers, loops) {
            nonisolated(unsafe) let worker = worker  // loop-confined: drained on its own loop
            loop.execute { worker.drain(until: deadline) }
        }
        for loop in loops { loop.waitUntilStopped() }
    }
}
