/// A setting that cannot be used, naming the setting so the message can say which.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The option's name as a user writes it (`cooldown`, `redis`, `region`).
    public let field: String
    public let message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "--\(field): \(message)" }
}
