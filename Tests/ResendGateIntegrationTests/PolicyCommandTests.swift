import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// The policy options of the built `resendgate send`, end to end against a real Redis:
/// every rule from its flags, exit 3 for a refusal of any kind, exit 2 for a bad rule.
@Suite("resendgate send: policy options")
struct PolicyCommandTests {
    @Test func regionAndNumberTypeRefusalsExitThreeAndWriteNothing() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let common = ["--redis", redis.url]

        let region = try await run(["send", "+1 650 253 0000", "--allow-regions", "CN,GB"] + common)
        #expect(region.exitCode == 3, "\(region)")
        #expect(region.stdout == "")
        #expect(region.stderr.contains("region US"), "\(region.stderr)")
        let premium = try await run(["send", "+44 909 879 0000"] + common)
        #expect(premium.exitCode == 3, "\(premium)")
        #expect(premium.stderr.contains("premium_rate"), "\(premium.stderr)")
        #expect(try redis.client().command("DBSIZE") == .integer(0))

        let allowed = try await run(["send", "+44 909 879 0000", "--allow-number-types", "premium_rate,mobile"] + common)
        #expect(allowed.exitCode == 0, "\(allowed)")
        #expect(try json(allowed.stdout)["phone"] as? String == "+449098790000")
        let environment = try await run(
            ["send", "+44 909 879 0000", "--purpose", "other", "--purposes", "other"] + common,
            environment: ["RESENDGATE_ALLOW_NUMBER_TYPES": "premium_rate"])
        #expect(environment.exitCode == 0, "\(environment)")
    }

    @Test func maxSendsIpLimitAndIdempotencyFromFlags() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let limits = ["--redis", redis.url, "--cooldown", "100ms", "--window", "60s", "--max-sends", "1",
                      "--ip-max-sends", "1", "--ip-window", "60s"]  // windows no run of six commands outlasts
        let first = try await run(["send", number, "--client-ip", "203.0.113.7", "--idempotency-key", "a1"] + limits)
        #expect(first.exitCode == 0, "\(first)")
        let allowed = try json(first.stdout)
        #expect(allowed["sends_left"] as? Int == 0)
        let replay = try await run(["send", number, "--client-ip", "203.0.113.7", "--idempotency-key", "a1"] + limits)
        #expect(replay.exitCode == 0, "\(replay)")
        #expect(replay.stdout == first.stdout, "a replay prints the first answer")
        let reused = try await run(["send", "+8613900139000", "--client-ip", "203.0.113.7", "--idempotency-key", "a1"] + limits)
        #expect(reused.exitCode == 2, "\(reused)")
        #expect(reused.stderr.contains("Idempotency-Key"), "\(reused.stderr)")

        let capped = try await run(["send", number] + limits)
        #expect(capped.exitCode == 3, "\(capped)")
        #expect(try json(capped.stdout)["reason"] as? String == "max_sends")
        let ip = try await run(["send", "+8613900139000", "--client-ip", "::ffff:203.0.113.7"] + limits)
        #expect(ip.exitCode == 3, "\(ip)")
        #expect(try json(ip.stdout)["reason"] as? String == "ip_limit")
        let badIP = try await run(["send", "+8613900139000", "--client-ip", "not-an-ip"] + limits)
        #expect(badIP.exitCode == 2, "\(badIP)")
    }

    @Test func policyFilePurposesAndKeySecret() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let path = try policyFile(#"{"purposes": {"login": {"cooldown": "60s,120s"}, "signup": {"cooldown": "180s"}}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let common = ["--redis", redis.url, "--policy", path, "--key-secret", "0123456789abcdef-secret"]
        let login = try json(try await run(["send", number, "--purpose", "login"] + common).stdout)
        let signup = try json(try await run(["send", number, "--purpose", "signup"] + common).stdout)
        #expect(login["retry_after_ms"] as? Int == 60_000)
        #expect(login["next_retry_after"] as? Int == 120)
        #expect(signup["retry_after_ms"] as? Int == 180_000)
        let keys = (try redis.client().command("KEYS", "*").array ?? []).compactMap(\.string)
        #expect(keys.count == 4, "\(keys)")  // login cooldown + sends, signup cooldown, the token secret
        #expect(!keys.joined().contains("13800138000"), "\(keys)")
        let status = try await run(["status", "138 0013 8000", "--region", "CN", "--purpose", "signup"] + common)
        #expect(try json(status.stdout)["active"] as? Bool == true, "\(status)")
    }

    /// `resendgate failed` counts down to the lock (exit 3 `locked`), which then refuses
    /// `send`, `verified` and `release` too.
    @Test func wrongCodesFromTheCommandLineLockTheNumber() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let common = ["--redis", redis.url, "--max-failed-checks", "2", "--lockout", "10m", "--lockout-scope", "number"]
        #expect(try await run(["send", number] + common).exitCode == 0)
        let first = try await run(["failed", number] + common)
        #expect(first.exitCode == 0, "\(first)")
        #expect(try json(first.stdout)["attempts_left"] as? Int == 1)
        let second = try await run(["failed", "138 0013 8000", "--region", "CN"] + common)
        #expect(second.exitCode == 3 && second.stderr.contains("locked"), "\(second)")
        let send = try await run(["send", number] + common)
        #expect(send.exitCode == 3, "\(send)")
        #expect(try json(send.stdout)["reason"] as? String == "locked")
        for command in ["verified", "release"] {
            let refused = try await run([command, number] + common)
            #expect(refused.exitCode == 3 && refused.stderr.contains("locked"), "\(command): \(refused)")
        }
        let badOutcome = try await run(["failed", number, "--redis", redis.url, "--max-failed-checks", "-1"])
        #expect(badOutcome.exitCode == 2 && badOutcome.stderr.hasPrefix("resendgate: --max-failed-checks:"), "\(badOutcome)")
    }

    /// The pumping guard per purpose from the policy file and from the flags, and its
    /// lint: a bad figure stops the command with exit 2 and the field named.
    @Test func thePumpingGuardFromThePolicyFileAndTheFlags() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let path = try policyFile(#"{"purposes": {"signup": {"pumping_min_sends": 2, "pumping_min_conversion": "50%"}}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let common = ["--redis", redis.url, "--policy", path]
        for index in 1...2 {
            let allowed = try await run(["send", "+44791100000\(index)", "--purpose", "signup"] + common)
            #expect(allowed.exitCode == 0, "\(allowed)")
        }
        let refused = try await run(["send", "+447911000003", "--purpose", "signup"] + common)
        #expect(refused.exitCode == 3, "\(refused)")
        #expect(try json(refused.stdout)["reason"] as? String == "suspected_pumping")
        // The default purpose has no guard in the file (nothing counted); with the flag it
        // counts its prefixes on its own: the first send passes, the second is refused.
        #expect(try await run(["send", "+447911000004"] + common).exitCode == 0)
        #expect(try await run(["send", "+447911000005", "--pumping-min-sends", "1"] + common).exitCode == 0)
        let flagged = try await run(["send", "+447911000007", "--pumping-min-sends", "1"] + common)
        #expect(flagged.exitCode == 3 && (try? json(flagged.stdout)["reason"] as? String) == "suspected_pumping", "\(flagged)")

        let badFlag = try await run(["send", "+447911000006", "--redis", redis.url, "--pumping-min-conversion", "150%"])
        #expect(badFlag.exitCode == 2 && badFlag.stderr.hasPrefix("resendgate: --pumping-min-conversion:"), "\(badFlag)")
        let badFile = try policyFile(#"{"purposes": {"signup": {"prefix_digits": 13}}}"#)
        defer { try? FileManager.default.removeItem(atPath: badFile) }
        let linted = try await run(["send", "+447911000006", "--redis", redis.url, "--policy", badFile])
        #expect(linted.exitCode == 2 && linted.stderr.contains("purposes.signup.prefix-digits"), "\(linted)")
    }

    /// Purposes are an allow-list for the CLI too: `send`, `status` and `release` refuse a
    /// purpose that is neither `default`, in `--purposes` (or RESENDGATE_PURPOSES), nor in
    /// the policy file, with exit 2 and nothing written to Redis.
    @Test func unconfiguredPurposesAreRefusedWithoutTouchingRedis() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let path = try policyFile(#"{"purposes": {"signup": {"cooldown": "3s"}}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let common = ["--redis", redis.url, "--policy", path, "--purposes", "login"]
        for command in ["send", "status", "release"] {
            for purpose in ["reset", "other", "d"] {
                let result = try await run([command, number, "--purpose", purpose] + common)
                #expect(result.exitCode == 2, "\(command) \(purpose): \(result)")
                #expect(result.stderr.contains("not a configured purpose"), "\(result.stderr)")
                #expect(result.stdout == "")
            }
        }
        #expect(try redis.client().command("DBSIZE") == .integer(0))
        for purpose in ["default", "login", "signup"] {
            let result = try await run(["send", number, "--purpose", purpose] + common)
            #expect(result.exitCode == 0, "\(purpose): \(result)")
        }
        let fromEnvironment = try await run(
            ["send", number, "--purpose", "reset", "--redis", redis.url], environment: ["RESENDGATE_PURPOSES": "reset,other"])
        #expect(fromEnvironment.exitCode == 0, "\(fromEnvironment)")
        let badName = try await run(["send", number, "--redis", redis.url, "--purposes", "login,Signup"])
        #expect(badName.exitCode == 2, "\(badName)")
        #expect(badName.stderr.hasPrefix("resendgate: --purposes:"), "\(badName.stderr)")
    }

    @Test(arguments: [
        (["--max-sends", "3", "--cooldown", "1s", "--window", "2s"], "--max-sends"),
        (["--max-sends", "0"], "--max-sends"),
        (["--ip-max-sends", "-1"], "--ip-max-sends"),
        (["--window", "0"], "--window"),
        (["--ip-window", "0s"], "--ip-window"),
        (["--cooldown", "1s,-1s"], "--cooldown"),
        (["--allow-regions", "CN,QQ"], "--allow-regions"),
        (["--allow-number-types", "mobile,landline"], "--allow-number-types"),
        (["--allow-number-types", ""], "--allow-number-types"),
        (["--key-secret", "short"], "--key-secret"),
        (["--policy", "/nonexistent/policy.json"], "--policy"),
    ])
    func badRulesExitTwoNamingTheOption(arguments: [String], option: String) async throws {
        let result = try await run(["send", number, "--redis", "redis://127.0.0.1:1/0"] + arguments)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.hasPrefix("resendgate: \(option):"), "\(result.stderr)")
        #expect(result.stdout == "")
    }

    @Test func badPolicyFileExitsTwoNamingTheField() async throws {
        let path = try policyFile(#"{"purposes": {"login": {"cooldown": "1s,2s", "window": "5s", "max_sends": 4}}}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await run(["send", number, "--redis", "redis://127.0.0.1:1/0", "--policy", path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("purposes.login.max-sends"), "\(result.stderr)")
    }

    /// Issued codes from the command line: `send` prints the code, `check` takes it once;
    /// the secret comes from the environment, and codes without one do not start.
    @Test func issuedCodesSendAndCheck() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let flags = ["--redis", redis.url, "--issue-codes", "--max-failed-checks", "2"]
        let secret = ["RESENDGATE_CODE_SECRET": "a secret from the environment"]
        let missing = try await run(["send", number] + flags)
        #expect(missing.exitCode == 2 && missing.stderr.contains("code-secret"), "\(missing)")
        let sent = try await run(["send", number] + flags, environment: secret)
        #expect(sent.exitCode == 0, "\(sent)")
        let code = try #require(try json(sent.stdout)["code"] as? String)
        let wrong = try await run(["check", number, "--code", "0000000"] + flags, environment: secret)
        #expect(wrong.exitCode == 3 && wrong.stderr.contains("1 more wrong check"), "\(wrong)")
        let right = try await run(["check", number, "--code", code] + flags, environment: secret)
        let valid = try json(right.stdout)["valid"] as? Bool
        #expect(right.exitCode == 0 && valid == true, "\(right)")
        let again = try await run(["check", number, "--code", code] + flags, environment: secret)
        #expect(again.exitCode == 3 && again.stderr.contains("already used"), "\(again)")
        let noCode = try await run(["check", number, "--code", code, "--redis", redis.url], environment: secret)
        #expect(noCode.exitCode == 2, "\(noCode)")
    }

    private func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
        let executable = try BuiltProducts.executable(named: "resendgate")
        return try await offThePool {
            try CommandRunner.run(executable, arguments, environment: environment, timeout: .seconds(20))
        }
    }

    private func json(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(text)")
    }

    private func policyFile(_ json: String) throws -> String {
        let path = NSTemporaryDirectory() + "resendgate-policy-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}
