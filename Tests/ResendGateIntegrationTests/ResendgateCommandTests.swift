import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// The built `resendgate` executable, end to end against a real Redis: exit codes, JSON on
/// stdout, one line on stderr, and a cooldown shared with the library in another process.
@Suite("resendgate send/status/release end to end")
struct ResendgateCommandTests {
    @Test func cooldownFromTheLibraryIsSeenByTheCommandLineAndBack() async throws {
        try await withLiveGate { redis, gate async throws in
            let start = ContinuousClock.now
            #expect(try await gate.reserve(phone: number, purpose: "login").allowed)
            let denied = try await resendgate(
                ["send", "138 0013 8000", "--purpose", "login", "--region", "CN", "--redis", redis.url] + TestPurposes.arguments)
            #expect(denied.exitCode == 3, "\(denied)")
            let json = try object(denied.stdout)
            #expect(json["allowed"] as? Bool == false)
            #expect(json["reason"] as? String == "cooldown")
            #expect(json["phone"] as? String == number)
            let left = try #require(json["retry_after_ms"] as? Int)
            expectRemaining(Int64(left), since: start)
            #expect(json["retry_after"] as? Int == Int(Decision.wholeSeconds(Int64(left))))

            let other = "+8613900139000"
            let allowed = try await resendgate(["send", other, "--purpose", "login", "--redis", redis.url] + TestPurposes.arguments)
            #expect(allowed.exitCode == 0, "\(allowed)")
            let decision = try await gate.reserve(phone: other, purpose: "login")
            #expect(!decision.allowed)
            #expect(decision.reason == .cooldown)
        }
    }

    @Test func sendStatusReleaseExitCodesAndJSONShape() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let common = ["--redis", redis.url, "--purpose", "login", "--purposes", "login"]

        let sent = try await resendgate(["send", "+86 138 0013 8000"] + common)
        #expect(sent.exitCode == 0, "\(sent)")
        #expect(sent.stderr == "")
        let allowed = try object(sent.stdout)
        #expect(Set(allowed.keys) == [
            "allowed", "phone", "purpose", "retry_after", "retry_after_ms", "resend_at", "server_time",
            "next_retry_after", "sends_left", "countdown_token",
        ])
        #expect(allowed["allowed"] as? Bool == true)
        #expect(allowed["phone"] as? String == number)
        #expect(allowed["purpose"] as? String == "login")
        #expect(allowed["retry_after"] as? Int == 60)
        #expect(allowed["retry_after_ms"] as? Int == 60_000)
        let resendAt = try #require(allowed["resend_at"] as? String)
        let serverTime = try #require(allowed["server_time"] as? String)
        #expect(try milliseconds(resendAt) - milliseconds(serverTime) == 60_000)

        let again = try await resendgate(["send", number] + common)
        #expect(again.exitCode == 3, "\(again)")
        let denied = try object(again.stdout)
        #expect(Set(denied.keys) == Set(allowed.keys).union(["reason"]))
        #expect(denied["allowed"] as? Bool == false)
        #expect(denied["reason"] as? String == "cooldown")

        let status = try await resendgate(["status", number] + common)
        #expect(status.exitCode == 0, "\(status)")
        let active = try object(status.stdout)
        #expect(Set(active.keys) == ["phone", "purpose", "active", "retry_after", "retry_after_ms", "resend_at", "server_time"])
        #expect(active["active"] as? Bool == true)
        let activeLeft = try #require(active["retry_after_ms"] as? Int)
        #expect(activeLeft > 0 && activeLeft <= 60_000)
        #expect(active["retry_after"] as? Int == Int(Decision.wholeSeconds(Int64(activeLeft))))

        let released = try await resendgate(["release", number] + common)
        #expect(released.exitCode == 0, "\(released)")
        #expect(try object(released.stdout) as NSDictionary == ["phone": number, "purpose": "login", "released": true])

        let idle = try object(try await resendgate(["status", number] + common).stdout)
        #expect(idle["active"] as? Bool == false)
        #expect(idle["retry_after"] as? Int == 0)
        #expect(idle["retry_after_ms"] as? Int == 0)
        #expect(idle["resend_at"] is NSNull)
        #expect(try await resendgate(["send", number] + common).exitCode == 0)
        // The default --max-refunds 1 was spent above: the second refund is refused (exit 3)
        // and the cooldown keeps running.
        let refused = try await resendgate(["release", number] + common)
        #expect(refused.exitCode == 3, "\(refused)")
        #expect(refused.stderr.contains("refund"), "\(refused.stderr)")
        #expect(try object(try await resendgate(["status", number] + common).stdout)["active"] as? Bool == true)
    }

    @Test func badInputExitsTwoWithOneLineOnStderr() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let cases: [[String]] = [
            ["send", "not a number", "--redis", redis.url],
            ["send", number, "--purpose", "Log In", "--redis", redis.url],
            ["send", number, "--bogus", "--redis", redis.url],
            ["send", "--redis", redis.url],
            ["send", number, "--redis", "http://nope"],
            ["send", number, "--cooldown", "soon", "--redis", redis.url],
            ["frobnicate"],
        ]
        for arguments in cases {
            let result = try await resendgate(arguments)
            #expect(result.exitCode == 2, "\(arguments): \(result)")
            #expect(result.stdout == "", "\(arguments)")
            #expect(result.stderr.hasPrefix("resendgate: "), "\(arguments): \(result.stderr)")
            if arguments != ["frobnicate"] {  // an unknown command also prints the usage
                #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            }
        }
        let unknown = try await resendgate(["send", number, "--bogus", "--redis", redis.url])
        #expect(unknown.stderr == "resendgate: unknown option --bogus (see --help)\n")
        #expect(try redis.client().keys() == [])
    }

    @Test func unreachableRedisExitsOneWithinTheTimeout() async throws {
        // What starting the program costs right now (under a sanitizer and a loaded
        // machine, seconds): the bound below is on top of it.
        let start = try await resendgate(["--help"])
        let result = try await resendgate(
            ["send", number, "--redis", "redis://127.0.0.1:\(try closedPort())/0", "--redis-timeout", "500ms"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("resendgate: store unavailable: "), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.duration < start.duration * 2 + .seconds(3), "\(result.duration) against \(start.duration) for --help")
    }

    @Test func helpExitsZero() async throws {
        let top = try await resendgate(["--help"])
        #expect(top.exitCode == 0)
        #expect(top.stdout.hasPrefix("usage: resendgate COMMAND"))
        for command in ["send", "status", "release"] {
            let help = try await resendgate([command, "--help"])
            #expect(help.exitCode == 0, "\(command): \(help)")
            #expect(help.stdout.hasPrefix("usage: resendgate \(command) PHONE"), "\(command)")
            #expect(help.stdout.contains("RESENDGATE_REDIS_URL"), "\(command)")
            #expect(help.stderr == "")
        }
    }

    @Test func honoursRedisURLAndRegionFromTheEnvironment() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let environment = ["RESENDGATE_REDIS_URL": redis.url, "RESENDGATE_REGION": "CN"]
        let sent = try await resendgate(["send", "13800138000"], environment: environment)
        #expect(sent.exitCode == 0, "\(sent)")
        #expect(try object(sent.stdout)["phone"] as? String == number)
        #expect(try redis.client().keys() == [cooldownKey()])
        // A flag wins over the environment.
        let elsewhere = try await resendgate(
            ["send", number, "--redis", "redis://127.0.0.1:\(try closedPort())/0", "--redis-timeout", "300ms"],
            environment: environment)
        #expect(elsewhere.exitCode == 1, "\(elsewhere)")
    }
}

// MARK: - Helpers

/// Runs the built `resendgate` on a thread of its own, so that waiting for it never holds
/// one of the few cooperative threads that the timing-sensitive tests need.
private func resendgate(_ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
    let executable = try BuiltProducts.executable(named: "resendgate")
    return try await offThePool {
        try CommandRunner.run(executable, arguments, environment: environment, timeout: .seconds(20))
    }
}

/// Stdout parsed as one JSON object.
private func object(_ text: String) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    return try #require(value as? [String: Any], "not a JSON object: \(text)")
}

/// An RFC 3339 timestamp with milliseconds (`2026-11-30T08:09:05.123Z`) in ms since 1970.
private func milliseconds(_ text: String) throws -> Int64 {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    let date = try #require(formatter.date(from: text), "not RFC 3339 with ms: \(text)")
    #expect(text.hasSuffix("Z") && text.count == 24, "\(text)")
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}
