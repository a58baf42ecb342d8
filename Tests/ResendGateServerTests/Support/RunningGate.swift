import Foundation
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateTestSupport

/// A real `redis-server` on a free port and an in-process `HTTPServer` on port 0 in
/// front of it, for one test. `stop()` shuts both down.
final class RunningGate: Sendable {
    static let apiKey = "test-key-0123456789abcdef"

    let redis: RedisServer
    let server: HTTPServer

    var port: Int { server.port }

    /// `redisTimeout` is short so that tests of a frozen Redis finish quickly. `apiKeys`
    /// are lines as `--api-keys-file` has them: `KEY` (send, read) or `KEY send,read,release`.
    init(
        apiKeys: [String] = [], region: String? = "CN", workers: Int = 2,
        redisTimeout: Duration = .milliseconds(300), drainTimeout: Duration = .seconds(5),
        maxConnectionsPerWorker: Int = 10_000, connectionTimeout: Duration = .seconds(10),
        policies: PolicySet? = nil, redisOptions: RedisServer.Options = RedisServer.Options(),
        onStoreFailure: StoreFailureMode = .closed, cooldown: Duration = .seconds(60)
    ) throws {
        redis = try RedisServer(redisOptions)
        do {
            let redisConfiguration = try RedisConfiguration(
                url: redis.url, connectTimeout: redisTimeout, commandTimeout: redisTimeout)
            server = try HTTPServer(
                configuration: ServerConfiguration(
                    host: "127.0.0.1", port: 0, workers: workers, apiKeys: try apiKeys.map { try APIKey(line: $0) },
                    connectionTimeout: connectionTimeout, maxConnectionsPerWorker: maxConnectionsPerWorker,
                    logLevel: .off, drainTimeout: drainTimeout, onStoreFailure: onStoreFailure),
                gate: GateConfiguration(
                    redis: redisConfiguration, policies: policies ?? PolicySet(fallback: Policy(ladder: [cooldown])),
                    defaultRegion: region))
        } catch {
            redis.stop()
            throw error
        }
    }

    /// A client that sends the API key when the server has one.
    func client(apiKey: String? = nil) -> HTTPTestClient {
        HTTPTestClient(port: port, apiKey: apiKey)
    }

    /// Polls `path` until it answers `status`, for at most `timeout`; returns the last answer.
    @discardableResult
    func poll(_ path: String, until status: Int, timeout: Duration = .seconds(5)) throws -> RawHTTPResponse {
        let deadline = ContinuousClock.now + timeout
        while true {
            let response = try client().get(path)
            if response.status == status || ContinuousClock.now >= deadline { return response }
            usleep(20_000)
        }
    }

    func stop() {
        redis.resume()
        server.shutdown()
        redis.stop()
    }
}

/// Runs `body` against a fresh gate and stops it afterwards, whatever happens.
func withRunningGate<T>(
    apiKeys: [String] = [], region: String? = "CN", workers: Int = 2, redisTimeout: Duration = .milliseconds(300),
    maxConnectionsPerWorker: Int = 10_000, connectionTimeout: Duration = .seconds(10),
    policies: PolicySet? = nil, _ body: (RunningGate) throws -> T
) throws -> T {
    let gate = try RunningGate(
        apiKeys: apiKeys, region: region, workers: workers, redisTimeout: redisTimeout,
        maxConnectionsPerWorker: maxConnectionsPerWorker, connectionTimeout: connectionTimeout, policies: policies)
    defer { gate.stop() }
    // The workers connect to Redis in the background; wait until every one is ready.
    let ready = try gate.poll("/readyz", until: 200)
    guard ready.status == 200 else { throw RawHTTPError.malformed("the gate never became ready: \(ready)") }
    return try body(gate)
}
