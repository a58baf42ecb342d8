/// The identity of one countdown, such as a server's `countdown_token` or
/// `"login:+8613800138000"`.
///
/// Subscriptions are keyed by this, never by a view or a list cell, so a reused cell that
/// subscribes to the same id carries on the same countdown.
public struct CountdownID: Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier text.
    public let rawValue: String

    /// Makes an id from any string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
