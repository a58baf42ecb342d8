import Foundation
import ResendGateServerTestSupport
import ResendGate
import ResendGateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The built `resendgate serve` as a child process on a real `redis-server`, for the
/// input abuse tests (Content-Type, Host and Origin, phone text, paths): the attack goes
/// through the same binary, flags and environment an operator runs, and its memory is
/// the child's own (`/proc/<pid>/status`).
final class InputAbuseGate: AbuseChildGate {
    let gate: TestGate
    var apiKey: String? { gate.clientAPIKey }

    /// Starts Redis and `resendgate serve --port 0 --workers 1 --region GB` plus
    /// `arguments`; returns once `/readyz` answers 200.
    init(_ arguments: [String] = [], environment: [String: String] = [:], apiKey: String? = nil) throws {
        gate = try TestGate(
            serve: ["--workers", "1", "--region", "GB", "--log-level", "warning"] + arguments, environment: environment, apiKey: apiKey)
    }

    /// A client with the gate's API key, if it has one.
    func client() -> HTTPTestClient {
        gate.client()
    }

    /// One request with exactly these headers (and the API key, if any): no Host is added.
    func rawRequest(_ method: String, _ target: String, headers: [(String, String)], body: String? = nil) throws -> RawHTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nConnection: close\r\n"
        if let apiKey { head += "Authorization: Bearer \(apiKey)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.utf8.count)\r\n" }
        let connection = try RawHTTPConnection(port: port, timeout: .seconds(5))
        try connection.write(head + "\r\n" + (body ?? ""))
        return try connection.readResponse(bodyless: method == "HEAD")
    }

    /// Every key in Redis, sorted.
    func redisKeys() throws -> [String] {
        let client = try redis.client()
        defer { client.close() }
        return try (client.command("KEYS", "*").array ?? []).compactMap(\.string).sorted()
    }

    /// The remaining time of a key in milliseconds (`PTTL`: -2 when it does not exist).
    func pttl(_ key: String) throws -> Int {
        let client = try redis.client()
        defer { client.close() }
        return try client.command("PTTL", key).integer ?? -2
    }

    /// The server's resident memory in bytes, from `/proc/<pid>/status` (`VmRSS`).
    func residentBytes() throws -> Int {
        try gate.residentBytes()
    }

    func stop() {
        gate.stop()
    }

    /// The Redis key of a number's cooldown, as the gate names it without `--key-secret`.
    static func cooldownKey(_ e164: String, purpose: String = "default") -> String {
        gateKey(.cooldown, e164, purpose: purpose)
    }
}

/// Runs `body` against a fresh child gate and stops it afterwards, whatever happens.
func withInputAbuseGate<T>(
    _ arguments: [String] = [], environment: [String: String] = [:], apiKey: String? = nil,
    _ body: (InputAbuseGate) throws -> T
) throws -> T {
    let gate = try InputAbuseGate(arguments, environment: environment, apiKey: apiKey)
    defer { gate.stop() }
    return try body(gate)
}
