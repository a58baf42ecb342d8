/// Why a Redis command got no usable answer.
public struct RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure: stable values.
    public enum Kind: String, Sendable {
        /// No connection: refused, closed, or still reconnecting.
        case unavailable
        /// The reply did not come within the command timeout.
        case timeout
        /// Redis answered with an error reply.
        case server
        /// Redis answered with something this client did not expect.
        case protocolViolation = "protocol"
    }

    public let kind: Kind
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "redis \(kind.rawValue): \(message)" }
}
