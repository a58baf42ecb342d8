import GateRuntime

/// Reads durations as users write them: `60` (seconds), `250ms`, `60s`, `5m`, `24h`, `7d`.
public enum DurationParser {
    public static func parse(_ text: String, field: String) throws(ConfigurationError) -> Duration {
        let trimmed = text.trimmingSpaces
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        let unit = trimmed.dropFirst(digits.count)
        guard !digits.isEmpty, digits.count <= 12, let value = Int64(digits) else {
            throw ConfigurationError(field: field, message: "\"\(text)\" is not a duration (try 60, 60s, 5m, 24h)")
        }
        let duration: Duration
        switch unit {
        case "", "s": duration = .seconds(value)
        case "ms": duration = .milliseconds(value)
        case "m": duration = .seconds(value * 60)
        case "h": duration = .seconds(value * 3600)
        case "d": duration = .seconds(value * 86_400)
        default:
            throw ConfigurationError(field: field, message: "\"\(text)\" has an unknown unit (use ms, s, m, h or d)")
        }
        guard duration > .zero else {
            throw ConfigurationError(field: field, message: "\"\(text)\" must be greater than zero")
        }
        return duration
    }

    /// Writes `duration` as `parse` reads it, in the largest unit that keeps it whole
    /// (hours, then seconds, then milliseconds): `24h`, `1h`, `60s`, `250ms`.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        guard milliseconds > 0 else { return "0s" }
        if milliseconds % 3_600_000 == 0 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(milliseconds)ms"
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a wait is never shortened.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return attoseconds % 1_000_000_000_000_000 > 0 ? millis + 1 : millis
    }
}
