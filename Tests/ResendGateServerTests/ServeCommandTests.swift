import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `resendgate serve` executable, end to end: graceful SIGTERM, the
/// loopback-only rule, and `--help`.
@Suite("resendgate serve", .ownThread)
struct ServeCommandTests {
    static func executable() throws -> String {
        try BuiltProducts.executable(named: "resendgate")
    }

    @Test func sigtermLetsRequestsInFlightCompleteRefusesNewConnectionsAndExitsZero() throws {
        let gate = try TestGate(serve: ["--workers", "2", "--redis-timeout", "4s", "--log-level", "warning"])
        defer { gate.stop(grace: .seconds(2)) }
        let (redis, server, port) = (gate.redis, try #require(gate.process), gate.port)
        let client = gate.client(timeout: .seconds(8))

        let paused = StallWatch.mark()
        redis.pause()
        let phones = ["+8613800138000", "+8613800138000", "+8613800138001"]
        let inFlight = try phones.map { phone in
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(8))
            try connection.write(client.requestBytes(
                "POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: Array(#"{"phone": "\#(phone)"}"#.utf8)))
            return connection
        }
        // All three are inside the server, waiting for the frozen Redis (+1: the /metrics request itself).
        try Self.poll(timeout: .seconds(1)) {
            try PrometheusSamples(client.get("/metrics").text).value("resendgate_http_requests_in_flight", "") == 4
        }

        let signalled = StallWatch.mark()
        server.signal(SIGTERM)
        try Self.poll(timeout: .seconds(1)) {
            do {
                _ = try RawHTTPConnection(port: port, timeout: .seconds(1))
                return false
            } catch RawHTTPError.refused {
                return true
            }
        }
        let running = server.isRunning
        // Unless this process stood frozen (CI) until the server's 4 s Redis timeout could
        // answer them all and let it exit (real time: the server is a process of its own).
        if ContinuousClock.now - paused < .milliseconds(3_500) {
            #expect(running, "the server must wait for its requests in flight")
        }
        redis.resume()
        // Real time, not running time: the server is a process of its own, and its 4 s Redis
        // timeout runs on while this one stands frozen (CI).
        let pausedFor = ContinuousClock.now - paused

        var statuses: [Int] = []
        for (index, (connection, phone)) in zip(inFlight, phones).enumerated() {
            let response: RawHTTPResponse
            do {
                response = try connection.readResponse()
            } catch {
                Issue.record("request \(index) in flight at SIGTERM got no answer: \(error)\n\(server.stderr)")
                continue
            }
            statuses.append(response.status)
            #expect([200, 429, 503].contains(response.status), "\(response)")
            #expect(response.header("Content-Type") == jsonContentType)
            if response.status == 503 {
                #expect(response.errorCode == "store_unavailable")
            } else {
                #expect(try response.decode(DecisionBody.self).phone == phone)
            }
        }
        if pausedFor < .seconds(3) {
            // Redis was resumed well within the 4 s timeout: every request was decided.
            #expect(statuses.sorted() == [200, 200, 429], "\(statuses)")
        } else {
            // This process stood frozen with Redis paused (CI) until the server's 4 s timeout
            // could run out: a 503 may stand for any decision, but the number sent twice is
            // never allowed twice, and every request was answered.
            #expect(statuses.count == 3, "\(statuses) after Redis was paused \(pausedFor)")
            #expect(statuses.prefix(2).filter { $0 == 200 }.count <= 1, "\(statuses)")
        }

        // Five seconds of this process's running time: a test frozen meanwhile hears the
        // exit late.
        let result = try #require(server.waitForExit(timeout: .seconds(5) - StallWatch.shared.ran(since: signalled)),
                                  "still running 5 s after SIGTERM:\n\(server.stderr)")
        #expect(result.status == .exited(0), "\(result)")
        #expect(result.stderr.contains("stopped"), "\(result.stderr)")
        #expect(!LoopbackPort.isAccepting(port))
    }

    @Test(arguments: [
        (["--host", "0.0.0.0"], [String: String]()),
        (["--host", "192.0.2.10"], [:]),
        ([], ["RESENDGATE_HOST": "0.0.0.0"]),
    ])
    func aNonLoopbackHostWithoutKeysIsRefusedWithExit2(arguments: [String], environment: [String: String]) throws {
        let result = try CommandRunner.run(
            try Self.executable(), ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0"] + arguments,
            environment: environment, timeout: .seconds(10))
        #expect(result.status == .exited(2), "\(result)")
        let host = arguments.last ?? environment["RESENDGATE_HOST"]!
        #expect(result.stderr.contains("\(host) is not a loopback address and no API keys are set"), "\(result.stderr)")
        #expect(result.stderr.contains("--api-keys-file"))
        #expect(result.stderr.contains("--insecure-no-auth"))
        #expect(!result.stderr.contains("listening on"))
    }

    /// Without binding anything: with `--insecure-no-auth` (or with keys) the host check
    /// passes, and the run stops at the next check, an unknown region, which `serve`
    /// reads before it opens a socket.
    @Test(arguments: [["--insecure-no-auth"], ["--api-keys", RunningGate.apiKey]])
    func aNonLoopbackHostIsAcceptedWithInsecureNoAuthOrKeys(extra: [String]) throws {
        let arguments = ["serve", "--host", "0.0.0.0", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--region", "ZZ"]
        let result = try CommandRunner.run(try Self.executable(), arguments + extra, timeout: .seconds(10))
        #expect(result.status == .exited(2), "\(result)")
        #expect(!result.stderr.contains("not a loopback address"), "\(result.stderr)")
        #expect(result.stderr.contains("\"ZZ\" is not a known region"), "\(result.stderr)")
        #expect(!result.stderr.contains("listening on"))

        #expect(throws: ConfigurationError.self) { try ServerConfiguration(host: "0.0.0.0", port: 0) }
        #expect(throws: Never.self) { try ServerConfiguration(host: "0.0.0.0", port: 0, insecureNoAuth: true) }
        #expect(throws: Never.self) { try ServerConfiguration(host: "0.0.0.0", port: 0, apiKeys: [APIKey(RunningGate.apiKey)]) }
        #expect(throws: Never.self) { try ServerConfiguration(host: "127.0.0.1", port: 0) }
        #expect(throws: Never.self) { try ServerConfiguration(host: "localhost", port: 0) }
    }

    /// An API key file naming a scope that does not exist stops the start (exit 2) with the
    /// line named and the key left out; so does a negative --max-refunds.
    /// `--cooldowns-in-windows` reaches the gate: once its 10 s warm-up is over, a ladder's
    /// cooldown is kept in the number's window key, and the next request still meets it.
    @Test func cooldownsInWindowsKeepsTheCooldownInTheWindowAfterTheWarmUp() throws {
        let gate = try TestGate(serve: ["--cooldown", "60,120", "--cooldowns-in-windows", "--log-level", "warning"])
        defer { gate.stop(grace: .seconds(2)) }
        let client = gate.client()
        let redis = try gate.redis.client()
        let deadline = ContinuousClock.now + .seconds(30)
        var index = 0
        var held: HeldCooldown?
        repeat {
            let phone = "+86139" + String(format: "%08d", index)
            index += 1
            #expect(try client.send(phone: phone).status == 200)
            held = try redis.heldCooldown(phone)
            if held?.heldIn == .window {
                #expect(try client.send(phone: phone).status == 429, "the cooldown in the window refuses")
                break
            }
            usleep(200_000)
        } while ContinuousClock.now < deadline
        #expect(held?.heldIn == .window, "after \(index) sends")
    }

    @Test func unknownScopesAndNegativeRefundLimitsAreRefusedWithExit2() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rg-keys-\(UUID().uuidString)").path
        try "# keys\n\(RunningGate.apiKey) send,read,delete\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keys = try CommandRunner.run(
            try Self.executable(), ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0", "--api-keys-file", path],
            timeout: .seconds(10))
        #expect(keys.status == .exited(2), "\(keys)")
        #expect(keys.stderr.contains(#"--api-keys-file: line 2: unknown scope "delete" (known: send, read, release, verify)"#), "\(keys.stderr)")
        #expect(!keys.stderr.contains(RunningGate.apiKey))
        #expect(!keys.stderr.contains("listening on"))

        let refunds = try CommandRunner.run(
            try Self.executable(), ["serve", "--port", "0", "--redis", "redis://127.0.0.1:1/0"],
            environment: ["RESENDGATE_MAX_REFUNDS": "-1"], timeout: .seconds(10))
        #expect(refunds.status == .exited(2), "\(refunds)")
        #expect(refunds.stderr.contains("--max-refunds"), "\(refunds.stderr)")
    }

    @Test func helpDocumentsTheKeyFileFormatAndItsScopes() throws {
        let result = try CommandRunner.run(try Self.executable(), ["serve", "--help"], timeout: .seconds(10))
        #expect(result.stdout.contains("'KEY send,read,release'"), "\(result.stdout)")
        #expect(result.stdout.contains("release: DELETE /v1/cooldowns"))
        #expect(result.stdout.contains("0 disables refunds"))
    }

    @Test func helpListsEveryOptionWithItsDefaultAndEnvironmentVariable() throws {
        let result = try CommandRunner.run(try Self.executable(), ["serve", "--help"], timeout: .seconds(10))
        #expect(result.status == .exited(0), "\(result)")
        let cores = String(ProcessInfo.processInfo.activeProcessorCount)
        let expected: [(option: String, defaultValue: String?, environment: String)] = [
            ("host", "127.0.0.1", "RESENDGATE_HOST"),
            ("port", "8080", "RESENDGATE_PORT"),
            ("workers", cores, "RESENDGATE_WORKERS"),
            ("api-keys-file", nil, "RESENDGATE_API_KEYS_FILE"),
            ("api-keys", nil, "RESENDGATE_API_KEYS"),
            ("insecure-no-auth", nil, "RESENDGATE_INSECURE_NO_AUTH"),
            ("allow-origins", nil, "RESENDGATE_ALLOW_ORIGINS"),
            ("log-level", "info", "RESENDGATE_LOG_LEVEL"),
            ("max-connections", "auto", "RESENDGATE_MAX_CONNECTIONS"),
            ("max-connection-memory", "16", "RESENDGATE_MAX_CONNECTION_MEMORY"),
            ("connection-timeout", "10s", "RESENDGATE_CONNECTION_TIMEOUT"),
            ("on-store-failure", "closed", "RESENDGATE_ON_STORE_FAILURE"),
            ("redis", "redis://127.0.0.1:6379/0", "RESENDGATE_REDIS_URL"),
            ("redis-cluster", nil, "RESENDGATE_REDIS_CLUSTER"),
            ("redis-sentinel", nil, "RESENDGATE_REDIS_SENTINEL"),
            ("sentinel-master", "mymaster", "RESENDGATE_SENTINEL_MASTER"),
            ("wait-replicas", "0", "RESENDGATE_WAIT_REPLICAS"),
            ("redis-timeout", "1s", "RESENDGATE_REDIS_TIMEOUT"),
            ("allow-evicting-redis", nil, "RESENDGATE_ALLOW_EVICTING_REDIS"),
            ("region", nil, "RESENDGATE_REGION"),
            ("cooldown", "60s", "RESENDGATE_COOLDOWN"),
            ("window", "24h", "RESENDGATE_WINDOW"),
            ("max-sends", nil, "RESENDGATE_MAX_SENDS"),
            ("max-refunds", "1", "RESENDGATE_MAX_REFUNDS"),
            ("max-failed-checks", "5", "RESENDGATE_MAX_FAILED_CHECKS"),
            ("lockout-scope", "code", "RESENDGATE_LOCKOUT_SCOPE"),
            ("lockout", "900s", "RESENDGATE_LOCKOUT"),
            ("pumping-min-sends", nil, "RESENDGATE_PUMPING_MIN_SENDS"),
            ("pumping-window", "1h", "RESENDGATE_PUMPING_WINDOW"),
            ("pumping-min-conversion", "10%", "RESENDGATE_PUMPING_MIN_CONVERSION"),
            ("prefix-digits", "4", "RESENDGATE_PREFIX_DIGITS"),
            ("trusted-for", "720h", "RESENDGATE_TRUSTED_FOR"),
            ("ip-max-sends", nil, "RESENDGATE_IP_MAX_SENDS"),
            ("ip-window", "1h", "RESENDGATE_IP_WINDOW"),
            ("ip-max-requests", nil, "RESENDGATE_IP_MAX_REQUESTS"),
            ("country-max-sends", nil, "RESENDGATE_COUNTRY_MAX_SENDS"),
            ("max-sends-total", nil, "RESENDGATE_MAX_SENDS_TOTAL"),
            ("limit", nil, "RESENDGATE_LIMIT"),
            ("send-hours", nil, "RESENDGATE_SEND_HOURS"),
            ("observe", nil, "RESENDGATE_OBSERVE"),
            ("allow-regions", nil, "RESENDGATE_ALLOW_REGIONS"),
            ("allow-number-types", "mobile,fixed_line_or_mobile", "RESENDGATE_ALLOW_NUMBER_TYPES"),
            ("purposes", nil, "RESENDGATE_PURPOSES"),
            ("policy", nil, "RESENDGATE_POLICY"),
            ("key-secret", nil, "RESENDGATE_KEY_SECRET"),
            ("token-secret", nil, "RESENDGATE_TOKEN_SECRET"),
            ("key-prefix", "rg", "RESENDGATE_KEY_PREFIX"),
            ("cooldowns-in-windows", nil, "RESENDGATE_COOLDOWNS_IN_WINDOWS"),
            ("test-numbers", nil, "RESENDGATE_TEST_NUMBERS"),
            ("issue-codes", nil, "RESENDGATE_ISSUE_CODES"),
            ("code-length", "6", "RESENDGATE_CODE_LENGTH"),
            ("code-lifetime", "600s", "RESENDGATE_CODE_LIFETIME"),
            ("code-on-resend", "same", "RESENDGATE_CODE_ON_RESEND"),
            ("code-secret", nil, "RESENDGATE_CODE_SECRET"),
            ("test-code", nil, "RESENDGATE_TEST_CODE"),
        ]
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for (option, defaultValue, environment) in expected {
            let index = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--\(option) ") || $0.trimmingCharacters(in: .whitespaces) == "--\(option)" },
                                     "--\(option) missing from:\n\(result.stdout)")
            if let defaultValue {
                #expect(lines[index].hasSuffix("(default: \(defaultValue))"), "\(lines[index])")
            } else {
                #expect(!lines[index].contains("(default:"), "\(lines[index])")
            }
            #expect(lines[index + 1].trimmingCharacters(in: .whitespaces) == "env \(environment)", "--\(option)")
        }
        // Nothing undocumented here: every option listed is one of the above.
        let listed = lines.compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("--") else { return nil }
            return String(trimmed.dropFirst(2).prefix { $0 != " " })
        }
        #expect(listed == expected.map(\.option))
    }

    /// Polls `condition` until it holds, for at most `timeout` of this process's running
    /// time, and once more after it: a process frozen past it (CI) looks again before it
    /// gives up.
    static func poll(timeout: Duration, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool) throws {
        let deadline = PatientDeadline(timeout)
        while true {
            if try condition() { return }
            if deadline.hasPassed { break }
            usleep(10_000)
        }
        Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
        throw RawHTTPError.timedOut(afterBytes: 0)
    }
}
