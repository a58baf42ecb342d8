/// A setting that cannot be used, naming the setting so the message can say which.
/// The library names settings by field, never by how a caller spells them: the command
/// line maps a field to its flag (`cooldown` to `--cooldown`).
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting's name (`cooldown`, `redis`, `region`), or a policy file's field
    /// path (`purposes.login.max-sends`).
    public let field: String
    public let message: String
    /// Other settings whose change would resolve the error (`insecure-no-auth` for a
    /// public host without keys), so a caller can point at them in its own words.
    public let remedies: [String]

    public init(field: String, message: String, remedies: [String] = []) {
        self.field = field
        self.message = message
        self.remedies = remedies
    }

    /// Whether `field` is a path into a policy file rather than a setting.
    public var isPolicyFileField: Bool { field.contains(".") }

    /// `cooldown: ...` for a setting, `policy file, purposes.login.max-sends: ...` for a
    /// field of the policy file.
    public var description: String {
        let remedy = remedies.isEmpty ? "" : " (see \(remedies.joined(separator: ", ")))"
        return (isPolicyFileField ? "policy file, \(field): " : "\(field): ") + message + remedy
    }
}

extension String {
    /// The text without leading and trailing spaces (settings as `a, b` lists).
    package var trimmingSpaces: Substring {
        let start = firstIndex { $0 != " " } ?? endIndex
        let end = lastIndex { $0 != " " }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}
