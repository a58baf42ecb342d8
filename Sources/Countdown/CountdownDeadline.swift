import Foundation

/// Turns the deadlines servers send into wall-clock `Date`s, ready for
/// ``CountdownCenter/start(_:wallClockDeadline:)``.
///
/// Accepted spellings:
/// - ISO 8601 / RFC 3339 date-times, with or without fractional seconds, `Z` or an offset:
///   `2024-06-01T12:00:00Z`, `2024-06-01T20:00:00.250+08:00`;
/// - Unix time as digits: seconds (`1717243200`, `1717243200.5`) or, with 12 or more
///   integer digits, milliseconds (`1717243200250`);
/// - a local date and time, `2024-06-01 20:00:00` (the common server format,
///   `yyyy-MM-dd HH:mm:ss`, optionally with a fraction `.250`), read in the given time zone;
/// - a date only, `2024-06-01`, meaning the **end** of that day in the given time zone,
///   i.e. the instant the next day begins (so the last second shown is 23:59:59's `1`).
public enum CountdownDeadline {
    /// Parses `text` as described above; a date-only or local date-time string is read in `timeZone`.
    public static func parse(_ text: String, timeZone: TimeZone) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let unix = unixTime(trimmed) { return unix }
        if let day = dateOnly(trimmed) {
            guard let end = endOfDay(year: day.year, month: day.month, day: day.day, timeZone: timeZone) else {
                throw CountdownDeadlineError(text: text)
            }
            return end
        }
        if let local = localDateTime(trimmed) {
            guard let date = date(local, timeZone: timeZone) else { throw CountdownDeadlineError(text: text) }
            return date
        }
        if let date = iso8601(trimmed) { return date }
        throw CountdownDeadlineError(text: text)
    }

    /// The instant `seconds` after the Unix epoch.
    public static func unixSeconds(_ seconds: Double) -> Date {
        Date(timeIntervalSince1970: seconds)
    }

    /// The instant `milliseconds` after the Unix epoch.
    public static func unixMilliseconds(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    /// The end of a calendar day in `timeZone`: the start of the following day (which is
    /// right across daylight-saving changes, unlike adding 86 400 s). Nil for an invalid date.
    public static func endOfDay(year: Int, month: Int, day: Int, timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day)
        guard components.isValidDate(in: calendar), let start = calendar.date(from: components) else { return nil }
        return calendar.date(byAdding: .day, value: 1, to: start)
    }

    // MARK: - Spellings

    /// Digits (optionally signed, optionally with a fraction) as Unix seconds or milliseconds.
    private static func unixTime(_ text: String) -> Date? {
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else {
            return nil
        }
        if parts.count == 1, parts[0].count >= 12, let milliseconds = Int64(text) {
            return unixMilliseconds(milliseconds)
        }
        return Double(text).map(unixSeconds)
    }

    /// `YYYY-MM-DD` and nothing else.
    private static func dateOnly(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let fields = text.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].count == 4, fields[1].count == 2, fields[2].count == 2,
              fields.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
              let year = Int(fields[0]), let month = Int(fields[1]), let day = Int(fields[2])
        else { return nil }
        return (year, month, day)
    }

    /// `YYYY-MM-DD HH:MM:SS` with an optional fraction, and nothing else.
    private static func localDateTime(_ text: String) -> (day: (year: Int, month: Int, day: Int),
                                                          hour: Int, minute: Int, second: Double)? {
        let halves = text.split(separator: " ", omittingEmptySubsequences: false)
        guard halves.count == 2, let day = dateOnly(String(halves[0])) else { return nil }
        let fields = halves[1].split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[0].count == 2, fields[1].count == 2,
              fields[0].allSatisfy(\.isASCIIDigit), fields[1].allSatisfy(\.isASCIIDigit),
              let hour = Int(fields[0]), let minute = Int(fields[1])
        else { return nil }
        let secondParts = fields[2].split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(secondParts.count), secondParts[0].count == 2,
              secondParts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
              let second = Double(fields[2])
        else { return nil }
        return (day, hour, minute, second)
    }

    /// The instant a local date-time names in `timeZone`; nil for one that does not exist
    /// (25:00, February 30th, or a time skipped by a daylight-saving change).
    private static func date(_ local: (day: (year: Int, month: Int, day: Int), hour: Int, minute: Int, second: Double),
                             timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let whole = Int(local.second)
        let components = DateComponents(year: local.day.year, month: local.day.month, day: local.day.day,
                                        hour: local.hour, minute: local.minute, second: whole)
        guard components.isValidDate(in: calendar), let start = calendar.date(from: components) else { return nil }
        let back = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: start)
        guard back.hour == local.hour, back.minute == local.minute, back.day == local.day.day else { return nil }
        return start.addingTimeInterval(local.second - Double(whole))
    }

    private static func iso8601(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

/// A deadline string that is none of the spellings ``CountdownDeadline`` accepts.
public struct CountdownDeadlineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text that could not be read.
    public let text: String

    /// Makes the error for `text`.
    public init(text: String) {
        self.text = text
    }

    public var description: String { "not a deadline (ISO 8601, Unix seconds or milliseconds, YYYY-MM-DD HH:MM:SS or YYYY-MM-DD): \(text)" }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
