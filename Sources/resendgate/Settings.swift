import ResendGate

/// Every option of every command, read in one place: its flag, its environment
/// variable (`RESENDGATE_<NAME>`), its default and its help, which double as the
/// documentation printed by `--help`.
struct Settings {
    struct Option {
        let name: String
        let defaultValue: String?
        let help: String
        var isFlag = false
        /// Overrides the environment variable's name where the contract names it otherwise.
        var environmentSuffix: String?
        var environmentName: String {
            "RESENDGATE_" + (environmentSuffix ?? name.uppercased().replacingOccurrences(of: "-", with: "_"))
        }
    }

    static let common: [Option] = [
        Option(name: "redis", defaultValue: RedisConfiguration.defaultURL,
               help: "Redis URL: redis://[user:password@]host:port/db or unix:///path/to/redis.sock",
               environmentSuffix: "REDIS_URL"),
        Option(name: "redis-timeout", defaultValue: "1s",
               help: "connect and command timeout for Redis; past it the answer is 'store unavailable'"),
        Option(name: "region", defaultValue: nil,
               help: "default region (two letters, e.g. CN) for numbers written without a country code"),
        Option(name: "cooldown", defaultValue: "60s",
               help: "cooldown after a send, or an escalation ladder such as 60,120,300"),
        Option(name: "window", defaultValue: "24h",
               help: "how long sends are counted for the escalation ladder"),
        Option(name: "key-prefix", defaultValue: "rg", help: "prefix of every Redis key"),
    ]

    static let perNumber: [Option] = [
        Option(name: "purpose", defaultValue: Purpose.default.name, help: "what the code is for: [a-z0-9_-]{1,32}"),
    ]

    private(set) var values: [String: String] = [:]
    private(set) var positional: [String] = []
    private(set) var helpRequested = false

    /// Reads `arguments` (after the command name) against `options`; flags win over
    /// the environment, which wins over the defaults.
    init(arguments: [String], environment: [String: String], options: [Option]) throws(UsageError) {
        for option in options {
            if let fromEnvironment = environment[option.environmentName] {
                values[option.name] = fromEnvironment
            } else if let fallback = option.defaultValue {
                values[option.name] = fallback
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" {
                helpRequested = true
                continue
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option --\(name) (see --help)")
            }
            if option.isFlag {
                values[name] = inlineValue ?? "true"
            } else if let inlineValue {
                values[name] = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                values[name] = arguments[index]
                index += 1
            }
        }
    }

    subscript(name: String) -> String? { values[name] }

    func flag(_ name: String) -> Bool {
        ["true", "1", "yes"].contains(values[name]?.lowercased() ?? "")
    }

    func duration(_ name: String) throws(ConfigurationError) -> Duration {
        try DurationParser.parse(values[name] ?? "", field: name)
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let text = values[name], let value = Int(text), range.contains(value) else {
            throw ConfigurationError(
                field: name, message: "\"\(values[name] ?? "")\" is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// The gate's configuration from the common options.
    func gateConfiguration() throws(ConfigurationError) -> GateConfiguration {
        let timeout = try duration("redis-timeout")
        let redis = try RedisConfiguration(url: values["redis"] ?? "", connectTimeout: timeout, commandTimeout: timeout)
        let policy = try CooldownPolicy(parsing: values["cooldown"] ?? "", window: try duration("window"))
        let region = values["region"].flatMap { $0.isEmpty ? nil : $0.uppercased() }
        return try GateConfiguration(
            redis: redis, policy: policy, defaultRegion: region, keyPrefix: values["key-prefix"] ?? "rg")
    }

    /// The `--help` text for a command.
    static func help(usage: String, summary: String, options: [Option]) -> String {
        var lines = ["usage: \(usage)", "", summary, "", "options (each also read from its environment variable):"]
        for option in options {
            let flag = option.isFlag ? "--\(option.name)" : "--\(option.name) VALUE"
            let fallback = option.defaultValue.map { " (default: \($0))" } ?? ""
            lines.append("  \(flag.padding(toLength: 24, withPad: " ", startingAt: 0)) \(option.help)\(fallback)")
            lines.append("  \("".padding(toLength: 24, withPad: " ", startingAt: 0)) env \(option.environmentName)")
        }
        return lines.joined(separator: "\n")
    }
}

/// A command line that cannot be understood; exit code 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
