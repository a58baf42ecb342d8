/// The words around the numbers, as a localisation hook: pass your own, or use
/// ``english`` or ``chinese``.
public struct CountdownStrings: Sendable {
    /// Total seconds as a short duration: `42s`, `42秒`.
    public var seconds: @Sendable (Int64) -> String
    /// Whole days before a `HH:MM:SS` clock: `2d`, `2天`.
    public var days: @Sendable (Int64) -> String
    /// The resend prompt around an already formatted remaining time: `Resend in 42s`, `42秒后重新发送`.
    public var resendPrompt: @Sendable (String) -> String

    /// Makes a set of strings from the three formatting closures.
    public init(seconds: @escaping @Sendable (Int64) -> String,
                days: @escaping @Sendable (Int64) -> String,
                resendPrompt: @escaping @Sendable (String) -> String) {
        self.seconds = seconds
        self.days = days
        self.resendPrompt = resendPrompt
    }

    /// English: `42s`, `2d 03:04:05`, `Resend in 42s`.
    public static let english = CountdownStrings(
        seconds: { "\($0)s" },
        days: { "\($0)d" },
        resendPrompt: { "Resend in \($0)" }
    )

    /// Simplified Chinese: `42秒`, `2天 03:04:05`, `42秒后重新发送`.
    public static let chinese = CountdownStrings(
        seconds: { "\($0)秒" },
        days: { "\($0)天" },
        resendPrompt: { "\($0)后重新发送" }
    )
}
