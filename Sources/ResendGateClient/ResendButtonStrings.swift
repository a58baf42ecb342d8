import Countdown
import Foundation

/// The words of a resend button: the countdown's from ``Countdown/CountdownStrings``
/// ("Resend in 42s"), the button's own, what VoiceOver reads, and the user-facing error
/// sentences. ``english`` and ``chinese`` are built in; ``localized(for:)`` picks one for a
/// locale and writes its digits. An app with its own string catalog fills the fields with
/// `String(localized:)` instead.
public struct ResendButtonStrings: Sendable {
    /// Before any code was sent: "Send code".
    public var send: String
    /// While the request is under way: "Sending…".
    public var sending: String
    /// Once a resend may go ahead: "Resend".
    public var resend: String
    /// The countdown's words ("Resend in 42s", "42秒后重新发送").
    public var countdown: CountdownStrings
    /// What VoiceOver reads as the button's label: "Send code", "Sending code", "Resend code".
    public var accessibilitySend: String, accessibilitySending: String, accessibilityResend: String
    /// A wait read aloud, by whole units with plural rules: "1 second", "1 minute 5 seconds",
    /// "42秒".
    public var spokenDuration: @Sendable (_ seconds: Int64) -> String
    /// The accessibility value while counting, around a spoken duration: "in 42 seconds", "42秒后".
    public var accessibilityWait: @Sendable (_ duration: String) -> String
    /// The sentences errors show (``ResendGateError/userMessage(_:)``).
    public var errors: ResendErrorStrings
    /// Rewrites the ASCII digits of a finished text in the locale's digits (identity for
    /// Latin digits): "٤٢".
    public var digits: @Sendable (String) -> String = { $0 }

    /// Makes a set of strings; the spoken and error words are English unless given.
    public init(send: String, sending: String, resend: String, countdown: CountdownStrings,
                accessibilitySend: String = "Send code", accessibilitySending: String = "Sending code",
                accessibilityResend: String = "Resend code",
                spokenDuration: @escaping @Sendable (Int64) -> String = ResendButtonStrings.englishDuration,
                accessibilityWait: @escaping @Sendable (String) -> String = { "in \($0)" },
                errors: ResendErrorStrings = .english) {
        self.send = send
        self.sending = sending
        self.resend = resend
        self.countdown = countdown
        self.accessibilitySend = accessibilitySend
        self.accessibilitySending = accessibilitySending
        self.accessibilityResend = accessibilityResend
        self.spokenDuration = spokenDuration
        self.accessibilityWait = accessibilityWait
        self.errors = errors
    }

    /// English.
    public static let english = ResendButtonStrings(send: "Send code", sending: "Sending…", resend: "Resend",
                                                    countdown: .english)
    /// Simplified Chinese: 获取验证码, 重新发送 (42秒后重新发送).
    public static let chinese = ResendButtonStrings(
        send: "获取验证码", sending: "发送中…", resend: "重新发送", countdown: .chinese,
        accessibilitySend: "获取验证码", accessibilitySending: "正在发送验证码", accessibilityResend: "重新发送验证码",
        spokenDuration: chineseDuration, accessibilityWait: { "\($0)后可用" }, errors: .chinese)

    /// The strings for `locale`: Chinese for any `zh` language (Simplified words), else
    /// English; in both, the locale's digits (Arabic-Indic for `ar-EG`, say).
    public static func localized(for locale: Locale) -> ResendButtonStrings {
        let language = locale.language.languageCode?.identifier ?? "en"
        var strings = language == "zh" ? chinese : english
        let table = digitTable(for: locale)
        if table != digitTable(for: Locale(identifier: "en_US_POSIX")) {
            strings.digits = { text in String(text.flatMap { $0.wholeNumberValue.map { table[$0] } ?? String($0) }) }
        }
        return strings
    }

    /// English durations with plurals: "1 second", "42 seconds", "1 minute 5 seconds", "2 hours 1 minute".
    public static let englishDuration: @Sendable (Int64) -> String = { total in
        let parts = durationParts(total)
        let names = [("hour", "hours"), ("minute", "minutes"), ("second", "seconds")]
        let words = zip(parts, names).compactMap { value, name -> String? in
            value == 0 ? nil : "\(value) \(value == 1 ? name.0 : name.1)"
        }
        return words.isEmpty ? "0 seconds" : words.joined(separator: " ")
    }

    /// Chinese durations (no plural forms): "42秒", "1分5秒", "2小时1分".
    public static let chineseDuration: @Sendable (Int64) -> String = { total in
        let parts = durationParts(total)
        let words = zip(parts, ["小时", "分", "秒"]).compactMap { value, unit in value == 0 ? nil : "\(value)\(unit)" }
        return words.isEmpty ? "0秒" : words.joined()
    }

    private static func durationParts(_ total: Int64) -> [Int64] {
        let total = max(total, 0)
        return [total / 3_600, total % 3_600 / 60, total % 60]
    }

    /// The locale's ten digits, 0 to 9.
    private static func digitTable(for locale: Locale) -> [String] {
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.usesGroupingSeparator = false
        return (0...9).map { formatter.string(from: NSNumber(value: $0)) ?? "\($0)" }
    }
}
