import GateRuntime

/// What a lock blocks once a sent code had `Policy.maxFailedChecks` wrong checks.
public enum LockoutScope: String, Sendable, CaseIterable {
    /// Further checks of that code (409 `code_locked`) until the number is sent a new one.
    /// The number's sends are not blocked, so wrong codes typed for someone else's number
    /// cannot keep its owner from getting a code; a guesser gets at most `maxFailedChecks`
    /// tries per code, and as many codes as the number's own limits allow.
    case code
    /// The number for `Policy.lockout`: its sends, refunds and checks get `locked`.
    /// Tighter against guessing, but anyone who can report `failed` for a number can lock
    /// its owner out of codes.
    case number

    /// Reads `code` or `number`, naming `field` otherwise.
    public static func parse(_ text: String, field: String = "lockout-scope") throws(ConfigurationError) -> LockoutScope {
        guard let scope = LockoutScope(rawValue: text) else {
            throw ConfigurationError(field: field, message: "\"\(text)\" is not a lockout scope (one of code, number)")
        }
        return scope
    }
}
