/// How long a number must wait between sends.
///
/// `ladder` escalates with the number of sends in `window`: with `60s,120s,300s`
/// the first send in the window is followed by 60 s of cooldown, the second by
/// 120 s, and every later one by 300 s. A single step is a flat cooldown.
public struct CooldownPolicy: Sendable, Equatable {
    public let ladder: [Duration]
    /// How long sends are counted for the ladder; the count starts at the first send.
    public let window: Duration

    /// A flat 60 s cooldown.
    public static let `default` = try! CooldownPolicy(ladder: [.seconds(60)])

    public init(ladder: [Duration], window: Duration = .seconds(86_400)) throws(ConfigurationError) {
        guard !ladder.isEmpty else {
            throw ConfigurationError(field: "cooldown", message: "needs at least one duration")
        }
        for step in ladder where step < .milliseconds(1) {
            throw ConfigurationError(field: "cooldown", message: "durations must be at least 1 ms, got \(step)")
        }
        guard window >= .milliseconds(1) else {
            throw ConfigurationError(field: "window", message: "must be at least 1 ms")
        }
        self.ladder = ladder
        self.window = window
    }

    /// Reads `60`, `60s`, `5m` or a ladder `60,120,300`.
    public init(parsing text: String, window: Duration = .seconds(86_400)) throws(ConfigurationError) {
        var steps: [Duration] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            steps.append(try DurationParser.parse(String(part), field: "cooldown"))
        }
        try self.init(ladder: steps, window: window)
    }

    /// Whether sends must be counted (only an escalating ladder needs the count).
    var countsSends: Bool { ladder.count > 1 }
}
