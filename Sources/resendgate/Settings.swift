import Foundation
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
        Option(name: "redis-cluster", defaultValue: nil,
               help: "a Redis Cluster instead of --redis's host: seed nodes host:port,host:port (password and timeouts from --redis)"),
        Option(name: "redis-sentinel", defaultValue: nil,
               help: "Sentinels host:port,... that name the master (with --sentinel-master; password and db from --redis)"),
        Option(name: "sentinel-master", defaultValue: "mymaster", help: "the master's name at the Sentinels"),
        Option(name: "wait-replicas", defaultValue: "0",
               help: "after each allowed send, wait until this many replicas have it (WAIT), so a failover cannot forget it"),
        Option(name: "redis-timeout", defaultValue: "1s",
               help: "connect and command timeout for Redis; past it the answer is 'store unavailable'"),
        Option(name: "region", defaultValue: nil,
               help: "default region (two letters, e.g. CN) for numbers written without a country code"),
        Option(name: "cooldown", defaultValue: "60s",
               help: "cooldown after a send, or an escalation ladder such as 60,120,300"),
        Option(name: "window", defaultValue: "24h",
               help: "the sliding window in which sends (for the ladder and --max-sends) and refunds (--max-refunds) are counted"),
        Option(name: "max-sends", defaultValue: nil, help: "at most this many sends per number and purpose in --window"),
        Option(name: "max-refunds", defaultValue: "1",
               help: "at most this many refunds (DELETE /v1/cooldowns, release) per number and purpose in --window; past it 429 refund_limit; 0 disables refunds (403 forbidden)"),
        Option(name: "ip-max-sends", defaultValue: nil, help: "at most this many sends per client IP (IPv6: per /64) in --ip-window"),
        Option(name: "ip-window", defaultValue: "1h", help: "the sliding window of --ip-max-sends"),
        Option(name: "allow-regions", defaultValue: nil, help: "only these regions may receive codes, e.g. CN,GB (unset: every region)"),
        Option(name: "allow-number-types", defaultValue: "mobile,fixed_line_or_mobile",
               help: "line types that may receive codes (premium_rate, shared_cost, voip, toll_free, fixed_line, ...)"),
        Option(name: "policy", defaultValue: nil,
               help: "JSON policy file: {\"default\": {...}, \"purposes\": {\"login\": {...}}} on top of the flags"),
        Option(name: "key-secret", defaultValue: nil,
               help: "Redis keys hold an HMAC-SHA256 of each number instead of the number (16+ characters)"),
        Option(name: "token-secret", defaultValue: nil,
               help: "secret that seals countdown tokens (16+ characters), the same on every gate; unset: one kept in Redis at PREFIX:token-secret, made by the first gate; changing it voids outstanding tokens (404)"),
        Option(name: "key-prefix", defaultValue: "rg", help: "prefix of every Redis key"),
    ]

    static let perNumber: [Option] = [
        Option(name: "purpose", defaultValue: Purpose.default.name, help: "what the code is for: [a-z0-9_-]{1,32}"),
    ]

    static let perSend: [Option] = [
        Option(name: "client-ip", defaultValue: nil, help: "the end user's IP address, for --ip-max-sends"),
        Option(name: "idempotency-key", defaultValue: nil, help: "retries with the same key get the first answer"),
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

    /// The gate's configuration from the common options; every rule is linted.
    func gateConfiguration() throws(ConfigurationError) -> GateConfiguration {
        let timeout = try duration("redis-timeout")
        var redis = try RedisConfiguration(url: values["redis"] ?? "", connectTimeout: timeout, commandTimeout: timeout)
        let cluster = values["redis-cluster"].flatMap { $0.isEmpty ? nil : $0 }
        let sentinels = values["redis-sentinel"].flatMap { $0.isEmpty ? nil : $0 }
        if cluster != nil && sentinels != nil {
            throw ConfigurationError(field: "redis-cluster", message: "use --redis-cluster or --redis-sentinel, not both")
        }
        if let cluster {
            redis = try .cluster(seeds: try RedisConfiguration.HostPort.parseList(cluster, field: "redis-cluster"), base: redis)
        } else if let sentinels {
            let master = values["sentinel-master"] ?? ""
            guard !master.isEmpty else { throw ConfigurationError(field: "sentinel-master", message: "needs the master's name") }
            redis = .sentinel(
                sentinels: try RedisConfiguration.HostPort.parseList(sentinels, field: "redis-sentinel"), master: master, base: redis)
        }
        var base = Policy(
            ladder: try Policy.parseLadder(values["cooldown"] ?? ""), window: try duration("window"),
            ipWindow: try duration("ip-window"),
            allowedNumberTypes: try Policy.parseNumberTypes(values["allow-number-types"] ?? ""))
        if values["max-sends"] != nil { base.maxSends = try integer("max-sends", in: 1...1_000_000) }
        base.maxRefunds = try integer("max-refunds", in: 0...1_000_000)
        if values["ip-max-sends"] != nil { base.ipMaxSends = try integer("ip-max-sends", in: 1...1_000_000_000) }
        if let regions = values["allow-regions"], !regions.isEmpty { base.allowedRegions = Policy.parseRegions(regions) }
        var policies = PolicySet(fallback: base)
        if let path = values["policy"], !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(field: "policy", message: "cannot read \(path)")
            }
            policies = try PolicySet.parse(json: data, base: base)
        }
        let region = values["region"].flatMap { $0.isEmpty ? nil : $0.uppercased() }
        let secret = values["key-secret"].flatMap { $0.isEmpty ? nil : $0 }
        return try GateConfiguration(
            redis: redis, policies: policies, defaultRegion: region, keyPrefix: values["key-prefix"] ?? "rg",
            keySecret: secret, tokenSecret: values["token-secret"].flatMap { $0.isEmpty ? nil : $0 },
            waitReplicas: try integer("wait-replicas", in: 0...16))
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
