import ResendGate

// The gate's Redis keys under the tests' prefix `rg`, spelled by `GateKeys` (the one
// place that knows them), so a test reads the keys the gate writes.

/// The key `kind` of `e164` for `purpose`, as a gate without `--key-secret` names it.
public func gateKey(_ kind: GateKeys.NumberKey, _ e164: String, purpose: String = "default") -> String {
    testKeys.key(kind, purpose: try! Purpose(purpose), number: e164)
}

/// The per-IP sends key of a client address (`ClientAddress.text`).
public func ipSendsKey(_ address: String) -> String { testKeys.ipSends(address: address) }

/// The countdown token secret the first gate on a Redis stores.
public let tokenSecretKey = testKeys.tokenSecret

/// The channel refunds are published on.
public let releasedChannel = testKeys.releasedChannel

/// The tests' key schema: the default prefix `rg`.
public let testKeys = GateKeys(prefix: "rg")

/// One send a number's window holds (`GateKeys.NumberKey.window`, written by `reserve.lua`).
public struct WindowSend: Equatable, Sendable {
    /// When it was sent, in Redis's ms since 1970.
    public let time: Int64
    /// Its nonce (the cooldown it started held the same).
    public let nonce: String

    public init(time: Int64, nonce: String) {
        self.time = time
        self.nonce = nonce
    }
}

extension RedisTestClient {
    /// The sends a number's window key holds, oldest first (none when the key is missing);
    /// stale ones included, as the key holds them.
    public func windowSends(_ key: String) throws -> [WindowSend] {
        let reply = try command("GET", key)
        if reply == .null { return [] }
        guard let text = reply.string, text.utf8.count % 29 == 0 else {
            throw TestSupportError.protocolViolation.with("\(key) holds no window: \(reply)")
        }
        let bytes = Array(text.utf8)
        return try stride(from: 0, to: bytes.count, by: 29).map { start in
            guard let time = Int64(String(decoding: bytes[start..<start + 13], as: UTF8.self)) else {
                throw TestSupportError.protocolViolation.with("\(key) holds no window: \(text)")
            }
            return WindowSend(time: time, nonce: String(decoding: bytes[start + 13..<start + 29], as: UTF8.self))
        }
    }
}
