import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateServer

/// What the command line asked for, typed: every field starts at the library's own
/// default (`Policy.defaultCooldown`, `RedisConfiguration.defaultTimeout`, ...), and the
/// options (`OptionLists.swift`) overwrite the fields they name. The commands build the
/// library's configuration values from these fields; no value is handed on as text.
struct Settings {
    // Redis
    var redisURL = RedisConfiguration.defaultURL
    var redisCluster: [RedisConfiguration.HostPort]?
    var redisSentinels: [RedisConfiguration.HostPort]?
    var sentinelMaster = RedisConfiguration.defaultSentinelMaster
    var waitReplicas = GateConfiguration.defaultWaitReplicas
    var redisTimeout = RedisConfiguration.defaultTimeout
    var allowEvictingRedis = false

    /// Where the gate's Redis is, for the start-up line: the URL, a cluster's seeds (its
    /// URL's host is not dialled then), or the Sentinels and the master's name.
    var redisSummary: String {
        if let redisCluster { return "Redis Cluster seeds " + redisCluster.map(\.description).joined(separator: ",") }
        if let redisSentinels {
            return "Redis Sentinel master \(sentinelMaster) via " + redisSentinels.map(\.description).joined(separator: ",")
        }
        return "Redis \(redisURL)"
    }

    // The gate and its policy
    var region: String?
    /// The flags' policy: the fallback of every purpose, and the base of a policy file.
    var policy = Policy.default
    var policyFile: String?
    /// Purposes configured besides `default` and the policy file's (`--purposes`).
    var purposes: [String] = []
    var keySecret: String?
    var tokenSecret: String?
    var keyPrefix = GateConfiguration.defaultKeyPrefix
    var testNumbers = TestNumbers.none
    var cooldownsInWindows = false
    var ipMaxRequests: RequestRate?
    /// The flags' policy issues codes (`--issue-codes`), with these settings.
    var issueCodes = false
    var codes = IssuedCodes()
    var codeSecret: String?
    var testCode: String?

    // send, status, release
    var purpose = Purpose.default.name
    var clientIP: String?
    var idempotencyKey: String?
    /// `check`: the code the user typed.
    var checkCode: String?

    // serve
    var host = ServerConfiguration.defaultHost
    var port = ServerConfiguration.defaultPort
    var workers = ServerConfiguration.defaultWorkers
    var apiKeysFile: String?
    var apiKeys: [String]?
    var insecureNoAuth = false
    /// nil: the gate's own origins; empty: none.
    var allowOrigins: [String]?
    var logLevel = ServerConfiguration.defaultLogLevel
    /// nil: what the open-file limit leaves (`auto`).
    var maxConnections: Int?
    /// What all client connections may hold together, in MiB.
    var maxConnectionMemoryMiB = ConnectionMemoryBudget.defaultTotal >> 20
    var connectionTimeout = ServerConfiguration.defaultConnectionTimeout
    var onStoreFailure = ServerConfiguration.defaultOnStoreFailure

    // watch
    /// The server `serve` runs by default.
    var watchServer = "http://\(ServerConfiguration.defaultHost):\(ServerConfiguration.defaultPort)"
    /// `en` or `zh`; nil: from `LANG`.
    var language: String?

    /// The gate's configuration; every rule is linted.
    func gateConfiguration() throws(ConfigurationError) -> GateConfiguration {
        var redis = try RedisConfiguration(url: redisURL, connectTimeout: redisTimeout, commandTimeout: redisTimeout)
        redis.allowEvictingRedis = allowEvictingRedis
        if redisCluster != nil && redisSentinels != nil {
            throw ConfigurationError(field: "redis-cluster", message: "use --redis-cluster or --redis-sentinel, not both")
        }
        if let redisCluster {
            redis = try .cluster(seeds: redisCluster, base: redis)
        } else if let redisSentinels {
            guard !sentinelMaster.isEmpty else { throw ConfigurationError(field: "sentinel-master", message: "needs the master's name") }
            redis = .sentinel(sentinels: redisSentinels, master: sentinelMaster, base: redis)
        }
        var policy = self.policy
        if issueCodes { policy.codes = codes }
        var policies = PolicySet(fallback: policy, plainPurposes: Set(purposes))
        if let policyFile {
            guard let data = FileManager.default.contents(atPath: policyFile) else {
                throw ConfigurationError(field: "policy", message: "cannot read \(policyFile)")
            }
            policies = try PolicySet.parse(json: data, base: policy, plainPurposes: Set(purposes))
        }
        var configuration = try GateConfiguration(
            redis: redis, policies: policies, defaultRegion: region?.uppercased(), keyPrefix: keyPrefix,
            keySecret: keySecret, tokenSecret: tokenSecret, waitReplicas: waitReplicas, testNumbers: testNumbers,
            cooldownsInWindows: cooldownsInWindows, codeSecret: codeSecret, testCode: testCode)
        configuration.ipMaxRequests = ipMaxRequests
        return configuration
    }
}

/// A command line read against a command's options: the text each option was given
/// (a flag wins over the environment), the other arguments, and whether help was asked for.
struct CommandLineReading {
    enum Help { case text, markdown }

    let options: [Option]
    private(set) var texts: [String: String] = [:]
    private(set) var positional: [String] = []
    private(set) var help: Help?

    init(arguments: [String], environment: [String: String], options: [Option]) throws(UsageError) {
        self.options = options
        for option in options {
            if let fromEnvironment = environment[option.environmentName] { texts[option.name] = fromEnvironment }
        }
        var index = 0
        var given: Set<String> = []
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--help", "-h": help = .text; continue
            case "--help-markdown": help = .markdown; continue
            default: break
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
            var text: String
            if option.isSwitch {
                text = inlineValue ?? "true"
            } else if let inlineValue {
                text = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                text = arguments[index]
                index += 1
            }
            // A repeated flag adds to the ones before it (the first replaces the environment's).
            if option.repeats, given.contains(name), let before = texts[name] { text = before + ";" + text }
            given.insert(name)
            texts[name] = text
        }
    }

    /// Prints the help asked for (`--help`, or the table in docs/configuration.md for `--help-markdown`);
    /// true when it did, and the command has nothing more to do.
    func printHelpIfAsked(usage: String, summary: String) -> Bool {
        switch help {
        case .text?: print(OptionHelp.text(usage: usage, summary: summary, options: options))
        case .markdown?: print(OptionHelp.markdownTable(options))
        case nil: return false
        }
        return true
    }

    /// The typed settings: the defaults, overwritten by every option given.
    func settings() throws(ConfigurationError) -> Settings {
        var settings = Settings()
        for option in options {
            if let text = texts[option.name] { try option.apply(&settings, text) }
        }
        return settings
    }
}

/// A command line that cannot be understood; exit code 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
