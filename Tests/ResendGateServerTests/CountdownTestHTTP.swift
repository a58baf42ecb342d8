import Foundation
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateServerTestSupport
import ResendGateTestSupport

/// A real redis-server and an in-process HTTP server on port 0, for the countdown tests.
/// (Named apart from other suites' helpers; another engineer adds files here too.)
final class CountdownTestServer {
    let gate: TestGate
    var redis: RedisServer { gate.redis }
    var port: Int { gate.port }

    init(cooldown: String = "60s", apiKeys: [String] = [], workers: Int = 1) throws {
        gate = try TestGate(waitUntilReady: false) { redis in
            let gate = try GateConfiguration(
                redis: try RedisConfiguration.patient(redis.url), policies: PolicySet(fallback: Policy(ladder: try Policy.parseLadder(cooldown)), plainPurposes: TestPurposes.names))
            return (try ServerConfiguration(port: 0, workers: workers, apiKeys: apiKeys.map { APIKey($0) }, logLevel: .off), gate)
        }
    }

    func stop() {
        gate.stop()
    }

    private var client: HTTPTestClient { HTTPTestClient(port: port, timeout: .seconds(5)) }

    func request(_ method: String, _ path: String, body: String? = nil, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try client.request(method, path, headers: headers, body: body)
    }

    /// `POST /v1/sends` for `phone`; returns the response.
    func send(_ phone: String, key: String? = nil) throws -> RawHTTPResponse {
        var client = client
        client.apiKey = key
        return try client.send(phone: phone)
    }

    /// Opens `GET path` as an event stream once the request is written.
    func openStream(_ path: String) throws -> EventStreamReader {
        try client.openStream(path)
    }

    /// `resendgate_sse_streams` from `/metrics`.
    func openStreams() throws -> Int {
        try gauge("resendgate_sse_streams")
    }

    /// A gauge's value from `/metrics`; -1 when absent.
    func gauge(_ name: String) throws -> Int {
        try client.metric(name) ?? -1
    }
}

struct CountdownTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
