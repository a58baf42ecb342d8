/// A setting that cannot be used, naming the setting so the message can say which.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The option's name as a user writes it (`cooldown`, `redis`, `region`), or a
    /// policy file's field path (`purposes.login.max-sends`).
    public let field: String
    public let message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// `--cooldown: ...` for a flag, `policy file, purposes.login.max-sends: ...` for a
    /// field of the policy file.
    public var description: String {
        field.contains(".") ? "policy file, \(field): \(message)" : "--\(field): \(message)"
    }
}
