import Foundation
import GateRuntime

/// Codes only within hours of the day: `08:00-21:00` (UTC), `08:00-21:00+08:00` (at that
/// offset from UTC); a window that ends before it starts spans midnight (`22:00-06:00`).
/// Outside it a send is refused with `outside_send_hours` until the window opens: for
/// purposes nobody needs at night (marketing opt-ins), which a bot farm's night shift then
/// cannot drain.
public struct SendHours: PolicyRule {
    public static let name = "send-hours"
    public static let placeholder = "HH:MM-HH:MM[±HH:MM]"
    public static let help = "sends only between these times of day (UTC, or at the offset given), a window that ends before it starts spanning midnight: outside them, 429 `outside_send_hours` until they begin ([Rules that are not counters](anti-abuse.md#rules-that-are-not-counters))"

    /// The window's start and end, in ms after midnight UTC.
    let start: Int64, end: Int64

    public init(parsing text: String, field: String) throws(ConfigurationError) {
        let fail = ConfigurationError(field: field, message: "\"\(text)\" is not a window of the day such as 08:00-21:00 or 08:00-21:00+08:00")
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        var offset: Int64 = 0
        if body.count == 17, let sign = body.dropFirst(11).first, sign == "+" || sign == "-" {
            guard let minutes = Self.minutes(body.suffix(5)), minutes <= 14 * 60 else { throw fail }
            offset = Int64(minutes) * (sign == "+" ? 1 : -1)
            body = body.prefix(11)
        }
        let parts = body.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let from = Self.minutes(parts[0]), let to = Self.minutes(parts[1]), from < 1440, to < 1440, from != to
        else { throw fail }
        let day: Int64 = 1440
        start = (Int64(from) - offset + day) % day * 60_000
        end = (Int64(to) - offset + day) % day * 60_000
    }

    public func refusal(of send: RuleInput) -> RuleRefusal? {
        let day: Int64 = 86_400_000
        let now = (send.nowMilliseconds % day + day) % day
        let inside = start < end ? now >= start && now < end : now >= start || now < end
        return inside ? nil : RuleRefusal(reason: .outsideSendHours, waitMilliseconds: (start - now + day) % day)
    }

    /// `HH:MM` as minutes after midnight.
    private static func minutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]),
              (0...23).contains(hours), (0...59).contains(minutes) else { return nil }
        return hours * 60 + minutes
    }
}
