import GateRuntime

/// Codes the gate makes, keeps sealed and checks itself (`Policy.codes`), so no back end
/// stores or compares a code by hand: an allowed send's answer carries the code for the
/// SMS, and a check (`POST /v1/checks`) says whether a typed code is the live one. Off by
/// default: a purpose without it answers and reports exactly as before.
public struct IssuedCodes: Sendable, Equatable {
    /// Digits in a code: 6 by default (one in a million per guess).
    public var length: Int
    /// How long a code may be checked, from the send that issued it: 10 minutes by
    /// default, apart from the cooldown (a late SMS still works after the cooldown ends).
    public var lifetime: Duration
    /// What a send within a live code's lifetime sends.
    public var onResend: Resend

    /// What an allowed send does while the number has a live code.
    public enum Resend: String, Sendable, CaseIterable {
        /// Sends the same code again (its lifetime and wrong checks carry on), so a first
        /// SMS that arrives late still works, as Twilio Verify does.
        case same
        /// Sends a fresh code, which voids the live one.
        case fresh
    }

    public static let defaultLength = 6
    public static let lengths = 4...10
    public static let defaultLifetime: Duration = .seconds(600)
    /// A code lives at most a day: longer only gives a guesser more time.
    public static let longestLifetime: Duration = .seconds(86_400)

    public init(length: Int = IssuedCodes.defaultLength, lifetime: Duration = IssuedCodes.defaultLifetime, onResend: Resend = .same) {
        self.length = length
        self.lifetime = lifetime
        self.onResend = onResend
    }

    /// Refuses a code that cannot work, naming the field (`where` prefixes it).
    public func lint(where prefix: String = "") throws(ConfigurationError) {
        guard Self.lengths.contains(length) else {
            throw ConfigurationError(field: prefix + "code-length", message: "must be \(Self.lengths.lowerBound) to \(Self.lengths.upperBound) digits, got \(length)")
        }
        guard lifetime >= .seconds(1), lifetime <= Self.longestLifetime else {
            throw ConfigurationError(field: prefix + "code-lifetime", message: "must be 1 s to 24 h, got \(lifetime)")
        }
    }

    /// Reads `same` or `fresh`, naming `field` otherwise.
    public static func parseResend(_ text: String, field: String = "code-on-resend") throws(ConfigurationError) -> Resend {
        guard let resend = Resend(rawValue: text) else {
            throw ConfigurationError(field: field, message: "\"\(text)\" is not a resend choice (one of same, fresh)")
        }
        return resend
    }

    /// Whether `text` could be a code of some length the gate issues: 4 to 10 ASCII digits.
    public static func isWellFormed(_ text: Substring) -> Bool {
        lengths.contains(text.utf8.count) && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
