/// Why a Redis command got no usable answer. `code` is stable (`unavailable`, `timeout`,
/// `server`, `protocol`, `evicting`); the kind itself stays inside the module, which alone switches
/// over it. The gate turns `evicting` into `GateError.storeEvictsKeys` and every other
/// `RedisError` into `GateError.storeUnavailable`.
public struct RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    enum Kind: String, Sendable {
        /// No connection: refused, closed, or still reconnecting.
        case unavailable
        /// The reply did not come within the command timeout.
        case timeout
        /// Redis answered with an error reply.
        case server
        /// Redis answered with something this client did not expect.
        case protocolViolation = "protocol"
        /// Redis may evict keys (its `maxmemory-policy` is not `noeviction`) and the
        /// configuration does not allow that: nothing is sent (RedisConnection+Eviction.swift).
        case evicting
    }

    let kind: Kind
    /// What happened, in words (Redis's own error reply for `server`).
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The stable code: `unavailable`, `timeout`, `server`, `protocol` or `evicting`.
    public var code: String { kind.rawValue }

    /// True when the command was refused because Redis may evict keys (`evicting`).
    public var isEviction: Bool { kind == .evicting }

    public var description: String { "redis \(kind.rawValue): \(message)" }
}
