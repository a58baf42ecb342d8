import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateTestSupport
import Testing

/// `serve`'s options come from one list: the table in docs/configuration.md is what
/// `--help-markdown` prints, and every default `--help` shows is the library's own.
extension ServeCommandTests {
    static var configurationDoc: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        }
    }

    @Test func theOptionsTableIsServeHelpMarkdown() throws {
        let doc = try Self.configurationDoc
        let start = try #require(doc.range(of: "| option | default | meaning |\n"))
        let end = try #require(doc.range(of: "\n\n", range: start.lowerBound..<doc.endIndex))
        let table = String(doc[start.lowerBound..<end.lowerBound]) + "\n"
        let result = try CommandRunner.run(try Self.executable(), ["serve", "--help-markdown"], timeout: .seconds(10))
        #expect(result.status == .exited(0), "\(result)")
        #expect(result.stdout == table, "docs/configuration.md's table differs from `resendgate serve --help-markdown`:\n\(result.stdout)")
        // Every option `--help` lists has its row.
        let help = try CommandRunner.run(try Self.executable(), ["serve", "--help"], timeout: .seconds(10))
        let flags = help.stdout.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return trimmed.hasPrefix("--") ? String(trimmed.prefix { $0 != " " }) : nil
        }
        #expect(flags.count >= 29)
        for flag in flags {
            #expect(table.contains("| `\(flag)"), "\(flag) has no row in docs/configuration.md's table")
        }
    }

    @Test func helpShowsTheLibrarysOwnDefaults() throws {
        let result = try CommandRunner.run(try Self.executable(), ["serve", "--help"], timeout: .seconds(10))
        let lines = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        func shownDefault(_ option: String) -> String? {
            guard let line = lines.first(where: { $0.hasPrefix("--\(option) ") }),
                  let open = line.range(of: "(default: ", options: .backwards) else { return nil }
            return String(line[open.upperBound...].dropLast())
        }
        let library: [(String, String)] = [
            ("cooldown", DurationParser.format(Policy.defaultCooldown)),
            ("window", DurationParser.format(Policy.defaultWindow)),
            ("ip-window", DurationParser.format(Policy.defaultIPWindow)),
            ("max-refunds", String(Policy.defaultMaxRefunds)),
            ("allow-number-types", PhoneNumberType.allCases.filter(Policy.defaultNumberTypes.contains).map(\.rawValue).joined(separator: ",")),
            ("redis", RedisConfiguration.defaultURL),
            ("redis-timeout", DurationParser.format(RedisConfiguration.defaultTimeout)),
            ("sentinel-master", RedisConfiguration.defaultSentinelMaster),
            ("key-prefix", GateConfiguration.defaultKeyPrefix),
            ("wait-replicas", String(GateConfiguration.defaultWaitReplicas)),
            ("host", ServerConfiguration.defaultHost),
            ("port", String(ServerConfiguration.defaultPort)),
            ("workers", String(ServerConfiguration.defaultWorkers)),
            ("connection-timeout", DurationParser.format(ServerConfiguration.defaultConnectionTimeout)),
            ("log-level", ServerConfiguration.defaultLogLevel.rawValue),
            ("on-store-failure", ServerConfiguration.defaultOnStoreFailure.rawValue),
        ]
        for (option, value) in library {
            #expect(shownDefault(option) == value, "--\(option)")
        }
        // The library's defaults are what the gate runs with when nothing is said.
        #expect(Policy.default.ladder == [Policy.defaultCooldown])
        #expect(try GateConfiguration(redis: RedisConfiguration(url: RedisConfiguration.defaultURL)).keyPrefix == "rg")
        #expect(try ServerConfiguration().connectionTimeout == .seconds(10))
    }

    /// The library names the setting; the command line names its flag and the flags
    /// that would resolve it.
    @Test func errorsNameAFieldInTheLibraryAndAFlagOnTheCommandLine() throws {
        let error = try #require(throws: ConfigurationError.self) { try ServerConfiguration(host: "192.0.2.10", port: 0) }
        #expect(error.field == "host")
        #expect(!error.description.contains("--"), "\(error.description)")
        #expect(error.remedies == ["api-keys-file", "api-keys", "insecure-no-auth"])
        let result = try CommandRunner.run(
            try Self.executable(), ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--host", "192.0.2.10"],
            timeout: .seconds(10))
        #expect(result.status == .exited(2), "\(result)")
        #expect(result.stderr.hasPrefix("resendgate: --host: 192.0.2.10 is not a loopback address"), "\(result.stderr)")
        #expect(result.stderr.contains("--api-keys (RESENDGATE_API_KEYS)"), "\(result.stderr)")
        // A bad value in the environment is named by its flag too.
        let timeout = try CommandRunner.run(
            try Self.executable(), ["serve", "--port", "0"], environment: ["RESENDGATE_CONNECTION_TIMEOUT": "soon"],
            timeout: .seconds(10))
        #expect(timeout.status == .exited(2), "\(timeout)")
        #expect(timeout.stderr.hasPrefix("resendgate: --connection-timeout: \"soon\" is not a duration"), "\(timeout.stderr)")
        // A flag replaces the environment's text before anything is read, so a bad value
        // there is never seen: the run gets as far as the host rule.
        let overridden = try CommandRunner.run(
            try Self.executable(), ["serve", "--port", "0", "--connection-timeout", "5s", "--host", "192.0.2.10"],
            environment: ["RESENDGATE_CONNECTION_TIMEOUT": "soon"], timeout: .seconds(10))
        #expect(overridden.status == .exited(2), "\(overridden)")
        #expect(overridden.stderr.hasPrefix("resendgate: --host: "), "\(overridden.stderr)")
    }
}
