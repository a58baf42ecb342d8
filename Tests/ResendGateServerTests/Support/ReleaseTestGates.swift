import Foundation
import ResendGateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `resendgate serve` processes (two workers each) on one Redis or one Redis Cluster, for
/// the tests of releases reaching open event streams on every gate.
final class ReleaseTestGates {
    let gates: [ServerProcess]
    let ports: [Int]

    /// `redis` is `["--redis", url]` or `["--redis-cluster", seeds]`.
    init(count: Int, redis: [String], cooldown: String = "60s", workers: Int = 2) throws {
        var gates: [ServerProcess] = []
        var ports: [Int] = []
        do {
            for _ in 0..<count {
                let gate = try ServerProcess(try BuiltProducts.executable(named: "resendgate"), [
                    "serve", "--port", "0", "--workers", "\(workers)", "--region", "CN", "--cooldown", cooldown,
                    "--log-level", "warning", "--redis-timeout", "1s",
                ] + TestPurposes.arguments + redis)
                gates.append(gate)
                ports.append(try gate.waitForListeningPort())
            }
            self.gates = gates
            self.ports = ports
            for port in ports { try Self.waitUntilReady(port: port) }
        } catch {
            for gate in gates { _ = gate.stop(grace: .seconds(2)) }
            throw error
        }
    }

    func stop() {
        for gate in gates { _ = gate.stop(grace: .seconds(2)) }
    }

    static func waitUntilReady(port: Int, timeout: Duration = .seconds(20)) throws {
        let deadline = ContinuousClock.now + timeout
        while (try? request(port: port, "GET", "/readyz").status) != 200 {
            guard ContinuousClock.now < deadline else { throw CountdownTestError("gate on \(port) never became ready") }
            usleep(20_000)
        }
    }

    static func request(port: Int, _ method: String, _ path: String, body: String? = nil) throws -> CountdownTestResponse {
        let socket = try CountdownTestSocket(port: port)
        defer { socket.close() }
        let headers = body == nil ? [:] : ["Content-Type": "application/json"]
        try socket.send(CountdownTestServer.head(method, path, body: body, headers: headers))
        return try CountdownTestResponse(reading: socket)
    }

    /// `POST /v1/sends` on gate `gate`: the countdown token of an allowed send.
    func send(_ phone: String, on gate: Int) throws -> String {
        let response = try Self.request(port: ports[gate], "POST", "/v1/sends", body: "{\"phone\": \"\(phone)\"}")
        guard response.status == 200, let token = try response.json()["countdown_token"] as? String else {
            throw CountdownTestError("send of \(phone) was answered \(response.status): \(response.text)")
        }
        return token
    }

    /// `DELETE /v1/cooldowns/{phone}` on gate `gate`: its status.
    func release(_ phone: String, on gate: Int) throws -> Int {
        let escaped = phone.replacingOccurrences(of: "+", with: "%2B")
        return try Self.request(port: ports[gate], "DELETE", "/v1/cooldowns/\(escaped)").status
    }

    /// A stream of `token` on gate `gate`, its first tick read.
    func openStream(_ token: String, on gate: Int) throws -> CountdownEventReader {
        let socket = try CountdownTestSocket(port: ports[gate])
        try socket.send(CountdownTestServer.head(
            "GET", "/v1/countdowns/\(token)/events", body: nil, headers: ["Accept": "text/event-stream"]))
        let reader = CountdownEventReader(socket)
        guard let first = try reader.next(), first.name == "tick" else {
            throw CountdownTestError("no first tick: \(reader.head ?? "no head")")
        }
        return reader
    }

    /// `resendgate_sse_streams` of gate `gate`.
    func openStreams(on gate: Int) throws -> Int {
        try sample("resendgate_sse_streams", on: gate)
    }

    /// A sample of `/metrics` on gate `gate`; -1 when absent.
    func sample(_ name: String, on gate: Int) throws -> Int {
        let text = try Self.request(port: ports[gate], "GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
    }
}

extension CountdownEventReader {
    /// Reads past ticks and heartbeats to the next `done`; nil when the stream ended without
    /// one or none came within `limit` (so a missed release fails fast, not after 60 s).
    func nextDone(within limit: Duration = .seconds(3)) throws -> Event? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, let event = try next() {
            if event.name == "done" { return event }
        }
        return nil
    }
}

/// Polls `condition` every 20 ms until it holds, for at most `timeout`.
func waitUntilTrue(_ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw CountdownTestError("timed out waiting until \(what)") }
        usleep(20_000)
    }
}
