import GateRuntime

/// `--ip-max-requests N/D`: at most `count` requests per client address in any `period`,
/// allowed or not, answered before Redis is asked.
public struct RequestRate: Sendable, Equatable {
    public let count: Int
    public let period: Duration

    public init(count: Int, period: Duration) {
        self.count = count
        self.period = period
    }

    /// Reads `600/1m` (a count, a slash, a duration), naming `field` when it is not one.
    public static func parse(_ text: String, field: String = "ip-max-requests") throws(ConfigurationError) -> RequestRate {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0].trimmingCharacters(in: .whitespaces)), count >= 1 else {
            throw ConfigurationError(field: field, message: "\"\(text)\" is not a rate (a count of at least 1, a slash and a duration, such as 600/1m)")
        }
        let period = try DurationParser.parse(String(parts[1]).trimmingCharacters(in: .whitespaces), field: field)
        guard period >= .milliseconds(1) else { throw ConfigurationError(field: field, message: "the period must be at least 1 ms") }
        return RequestRate(count: count, period: period)
    }

    /// `600/1m`, as `parse` reads it.
    public var text: String { "\(count)/\(DurationParser.format(period))" }
}
