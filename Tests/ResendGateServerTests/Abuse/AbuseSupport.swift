import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// What the abuse suites share: requests pipelined on one connection, JSON bodies, and
/// the Redis keys they count.
enum Abuse {
    static let number = "+8613800138000"
    static let encoded = "%2B8613800138000"
    /// A key that may send, read and release (`--api-keys-file` line).
    static let releaseKey = "abuse-release-key-0123456789"

    static func cooldownKey(_ purpose: String = "default") -> String { gateKey(.cooldown, number, purpose: purpose) }
    static func windowKey(_ purpose: String = "default") -> String { gateKey(.window, number, purpose: purpose) }
    static func refundsKey(_ purpose: String = "default") -> String { gateKey(.refunds, number, purpose: purpose) }

    /// Writes every request on one keep-alive connection before reading any answer, then
    /// reads one answer per request, in order.
    static func pipeline(_ gate: RunningGate, apiKey: String?, _ requests: [(method: String, target: String, headers: [(String, String)], body: String?)]) throws -> [RawHTTPResponse] {
        let client = gate.client(apiKey: apiKey)
        let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(20))
        defer { connection.close() }
        var bytes: [UInt8] = []
        for request in requests {
            bytes += client.requestBytes(
                request.method, request.target, headers: request.headers, body: request.body.map { Array($0.utf8) }, keepAlive: true)
        }
        try connection.write(bytes)
        return try requests.map { _ in try connection.readResponse() }
    }

    /// `POST /v1/sends` for `number`, as a pipelined request.
    static func post(_ json: String = #"{"phone": "+8613800138000"}"#, headers: [(String, String)] = [])
        -> (method: String, target: String, headers: [(String, String)], body: String?)
    {
        ("POST", "/v1/sends", [("Content-Type", "application/json")] + headers, json)
    }

    /// `DELETE /v1/cooldowns/{number}`, as a pipelined request.
    static let delete: (method: String, target: String, headers: [(String, String)], body: String?) =
        ("DELETE", "/v1/cooldowns/\(encoded)", [], nil)

    static func object(_ response: RawHTTPResponse) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw RawHTTPError.malformed("not a JSON object: \(response)")
        }
        return object
    }

    /// Expects `response` to be a 429 for `reason` whose `retry_after` lies in `waits` and is
    /// its `Retry-After` header, with `policy` as its `RateLimit-Policy` when one is given;
    /// returns its body.
    @discardableResult
    static func expectLimited(
        _ response: RawHTTPResponse, _ reason: String, waits: ClosedRange<Int>, policy: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        #expect(response.status == 429, "\(response)", sourceLocation: sourceLocation)
        let body = try object(response)
        #expect(body["reason"] as? String == reason, "\(response)", sourceLocation: sourceLocation)
        let wait = try #require(body["retry_after"] as? Int, sourceLocation: sourceLocation)
        #expect(waits.contains(wait), "\(wait)", sourceLocation: sourceLocation)
        #expect(response.header("Retry-After") == String(wait), sourceLocation: sourceLocation)
        if let policy { #expect(response.header("RateLimit-Policy") == policy, sourceLocation: sourceLocation) }
        return body
    }

    /// The `error` object of an error answer.
    static func error(_ response: RawHTTPResponse) throws -> [String: Any] {
        guard let error = try object(response)["error"] as? [String: Any] else {
            throw RawHTTPError.malformed("not an error answer: \(response)")
        }
        return error
    }

    /// The sends the number's window holds.
    static func windowCount(_ purpose: String = "default", in redis: RedisServer) throws -> Int {
        try redis.client().windowSends(windowKey(purpose)).count
    }

    static func count(_ key: String, in redis: RedisServer) throws -> Int {
        guard let count = try redis.client().command("ZCARD", key).integer else {
            throw RawHTTPError.malformed("ZCARD \(key) is no integer")
        }
        return count
    }
}
