/// Why a Redis command got no usable answer. `code` is stable (`unavailable`, `timeout`,
/// `server`, `protocol`); the kind itself stays inside the module, which alone switches
/// over it. The gate turns every `RedisError` into `GateError.storeUnavailable`.
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
    }

    let kind: Kind
    /// What happened, in words (Redis's own error reply for `server`).
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The stable code: `unavailable`, `timeout`, `server` or `protocol`.
    public var code: String { kind.rawValue }

    public var description: String { "redis \(kind.rawValue): \(message)" }
}
