import Foundation
import ResendGateClient
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `resendgate serve` processes (two workers each) on one Redis or one Redis Cluster, for
/// the tests of releases reaching open event streams on every gate.
final class ReleaseTestGates {
    /// The `data` of the `done` that a release ends a stream with.
    static let released = "{\"retry_after\": 0, \"retry_after_ms\": 0, \"reason\": \"released\"}"

    let gates: [TestGate]
    var ports: [Int] { gates.map(\.port) }

    /// `redis` is `["--redis", url]` or `["--redis-cluster", seeds]`.
    init(count: Int, redis: [String], cooldown: String = "60s", workers: Int = 2) throws {
        var gates: [TestGate] = []
        do {
            for _ in 0..<count {
                gates.append(try TestGate(serve: [
                    "--workers", "\(workers)", "--region", "CN", "--cooldown", cooldown,
                    "--log-level", "warning", "--redis-timeout", "1s",
                ] + redis, ownRedis: false))
            }
        } catch {
            for gate in gates { gate.stop(grace: .seconds(2)) }
            throw error
        }
        self.gates = gates
    }

    func stop() {
        for gate in gates { gate.stop(grace: .seconds(2)) }
    }

    static func waitUntilReady(port: Int, timeout: Duration = .seconds(20)) throws {
        try HTTPTestClient(port: port, timeout: .seconds(3)).waitUntilReady(timeout: timeout)
    }

    static func request(port: Int, _ method: String, _ path: String, body: String? = nil) throws -> RawHTTPResponse {
        let headers = body == nil ? [] : [("Content-Type", "application/json")]
        return try HTTPTestClient(port: port, timeout: .seconds(5)).request(method, path, headers: headers, body: body)
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
    func openStream(_ token: String, on gate: Int) throws -> EventStreamReader {
        let reader = try HTTPTestClient(port: ports[gate], timeout: .seconds(5)).openStream("/v1/countdowns/\(token)/events")
        guard let first = try reader.next(), first.event == "tick" else {
            throw CountdownTestError("no first tick: \(reader.head?.statusLine ?? "no head")")
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

extension EventStreamReader {
    /// Reads past ticks and heartbeats to the next `done`; nil when the stream ended without
    /// one or none came within `limit` of this process's running time (so a missed release
    /// fails fast, not after 60 s; a process frozen past `limit` still reads what came).
    func nextDone(within limit: Duration = .seconds(3)) throws -> ServerSentEvent? {
        let deadline = PatientDeadline(limit)
        while deadline.hasTimeLeft, let event = try next() {
            if event.event == "done" { return event }
        }
        return nil
    }

    /// Expects the next `done` to say `released` within a second of `mark`, less the time
    /// this process stood frozen.
    func expectReleased(since mark: ContinuousClock.Instant, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let done = try #require(try nextDone(), sourceLocation: sourceLocation)
        let delay = StallWatch.shared.ran(since: mark)
        #expect(done.data == ReleaseTestGates.released, sourceLocation: sourceLocation)
        #expect(delay < .seconds(1), "the release reached the stream after \(delay) unstalled, \(ContinuousClock.now - mark) in all",
                sourceLocation: sourceLocation)
    }
}

/// How many clients of `client`'s Redis node follow the release channel (`PUBSUB NUMSUB`);
/// -1 when the reply is not the channel's pair.
func releaseSubscribers(_ client: RedisTestClient) throws -> Int {
    guard case .array(let items) = try client.command("PUBSUB", "NUMSUB", releasedChannel), items.count == 2 else { return -1 }
    return items[1].integer ?? -1
}

/// Polls `condition` every 20 ms until it holds, for at most `timeout` of this process's
/// running time (a frozen process has not looked meanwhile).
func waitUntilTrue(_ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) throws {
    let deadline = PatientDeadline(timeout)
    while try !condition() {
        guard deadline.hasTimeLeft else { throw CountdownTestError("timed out waiting until \(what)") }
        usleep(20_000)
    }
}
