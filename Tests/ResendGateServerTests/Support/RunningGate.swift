import Foundation
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateServerTestSupport
import ResendGateTestSupport

/// The server suites' in-process gate: `TestGate` with their defaults (the name is kept so
/// that the many suites using it read as before).
typealias RunningGate = TestGate

extension TestGate {
    static let apiKey = "test-key-0123456789abcdef"

    /// An in-process gate on a fresh Redis; returns before the workers have reached Redis
    /// unless `waitUntilReady`.
    /// `redisTimeout` is long: a Redis starved for a moment on a loaded CI machine is not a
    /// fault, and only the tests of a frozen Redis pass a short one (as they must). `apiKeys`
    /// are lines as `--api-keys-file` has them: `KEY` (send, read) or `KEY send,read,release`.
    /// `testPurposes` configures `TestPurposes` on top of `policies`; false: exactly `policies`.
    convenience init(
        apiKeys: [String] = [], region: String? = "CN", workers: Int = 2,
        redisTimeout: Duration = .seconds(5), drainTimeout: Duration = .seconds(5),
        maxConnectionsPerWorker: Int = 10_000, connectionTimeout: Duration = .seconds(10),
        policies: PolicySet? = nil, redisOptions: RedisServer.Options = RedisServer.Options(),
        onStoreFailure: StoreFailureMode = .closed, cooldown: Duration = .seconds(60), keySecret: String? = nil,
        testPurposes: Bool = true, ipMaxRequests: RequestRate? = nil, codeSecret: String? = nil, waitUntilReady: Bool = false
    ) throws {
        let policies = policies ?? PolicySet(fallback: Policy(ladder: [cooldown]))
        try self.init(redis: redisOptions, waitUntilReady: waitUntilReady) { redis in
            let redisConfiguration = try RedisConfiguration(
                url: redis.url, connectTimeout: redisTimeout, commandTimeout: redisTimeout)
            var gate = try GateConfiguration(
                redis: redisConfiguration, policies: testPurposes ? Self.withTestPurposes(policies) : policies,
                defaultRegion: region, keySecret: keySecret, codeSecret: codeSecret)
            gate.ipMaxRequests = ipMaxRequests
            return (
                try ServerConfiguration(
                    host: "127.0.0.1", port: 0, workers: workers, apiKeys: try apiKeys.map { try APIKey(line: $0) },
                    connectionTimeout: connectionTimeout, maxConnectionsPerWorker: maxConnectionsPerWorker,
                    logLevel: .off, drainTimeout: drainTimeout, onStoreFailure: onStoreFailure),
                gate
            )
        }
    }

    /// `policies` with the suites' purposes configured (`TestPurposes`): a gate decides
    /// only configured purposes, and the tests name these without a policy of their own.
    static func withTestPurposes(_ policies: PolicySet) -> PolicySet {
        var configured = policies
        configured.plainPurposes.formUnion(TestPurposes.names)
        return configured
    }

    /// Polls `path` until it answers `status`, for at most `timeout`; returns the last answer.
    @discardableResult
    func poll(_ path: String, until status: Int, timeout: Duration = .seconds(5)) throws -> RawHTTPResponse {
        // In this process's running time: the gate runs in it, and a process frozen past the
        // timeout (CI) would otherwise give it one try only, before its timers had run.
        let deadline = PatientDeadline(timeout)
        while true {
            let response = try client().get(path)
            if response.status == status || deadline.hasPassed { return response }
            usleep(20_000)
        }
    }
}

/// Runs `body` against a fresh in-process gate, once every worker is ready, and stops it
/// afterwards, whatever happens.
func withRunningGate<T>(
    apiKeys: [String] = [], region: String? = "CN", workers: Int = 2, redisTimeout: Duration = .seconds(5),
    maxConnectionsPerWorker: Int = 10_000, connectionTimeout: Duration = .seconds(10),
    policies: PolicySet? = nil, testPurposes: Bool = true, codeSecret: String? = nil, _ body: (RunningGate) throws -> T
) throws -> T {
    try TestGate.with({
        try RunningGate(
            apiKeys: apiKeys, region: region, workers: workers, redisTimeout: redisTimeout,
            maxConnectionsPerWorker: maxConnectionsPerWorker, connectionTimeout: connectionTimeout, policies: policies,
            testPurposes: testPurposes, codeSecret: codeSecret, waitUntilReady: true)
    }, body)
}
