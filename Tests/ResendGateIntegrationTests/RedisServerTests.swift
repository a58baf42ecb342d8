import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("RedisServer: a real redis-server per test", .ownThread)
struct RedisServerTests {
    @Test func answersPingOnItsOwnLoopbackPort() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        #expect(redis.url == "redis://127.0.0.1:\(redis.port)/0")
        let client = try redis.client()
        #expect(try client.command("PING") == .simpleString("PONG"))
        let set = StallWatch.mark()
        #expect(try client.command("SET", "rg:k", "v", "PX", "60000") == .simpleString("OK"))
        let pttl = try #require(try client.command("PTTL", "rg:k").integer)
        // Less the time passed since (Redis counts on while this process stands frozen).
        let passed = Int((ContinuousClock.now - set) / .milliseconds(1))
        #expect(pttl <= 60_000 && pttl >= 59_000 - passed, "\(pttl) after \(passed) ms")
        #expect(try client.command("KEYS", "rg:*") == .array([.bulkString("rg:k")]))
        #expect(try client.command("GET", "missing") == .null)
        #expect(try client.command("DEBUG", "SLEEP", "0") == .simpleString("OK"))
        #expect(try client.command("NOSUCHCOMMAND").isError)
    }

    /// Moving time forward ages every key as Redis's clock would: a time to live shrinks or
    /// runs out, sorted-set scores and a window's send times move back by exactly that much,
    /// the rest is kept.
    @Test func advancingTimeAgesEveryKey() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let client = try redis.client()
        let set = StallWatch.mark()
        try client.command("SET", "rg:long", "v", "PX", "60000")
        try client.command("SET", "rg:short", "v", "PX", "3000")
        try client.command("SET", "rg:forever", "v")
        try client.command("ZADD", "rg:sends", "1796145777374", "a", "1796145779000", "b")
        // 30 s, not a tight 5: a test process frozen for a second (CI) must not see it expire.
        try client.command("PEXPIRE", "rg:sends", "30000")
        let window = gateKey(.window, "+8613800138000")
        try client.command("SET", window, "1796145777374AAAAAAAAAAAAAAAA1796145779000BBBBBBBBBBBBBBBB", "PX", "60000")
        try client.advanceTime(byMilliseconds: 4_000)
        #expect(try client.windowSends(window) == [
            WindowSend(time: 1_796_145_773_374, nonce: "AAAAAAAAAAAAAAAA"), WindowSend(time: 1_796_145_775_000, nonce: "BBBBBBBBBBBBBBBB"),
        ])
        #expect(try client.windowSends(gateKey(.window, "+8613800138001")).isEmpty)
        let long = try #require(try client.command("PTTL", "rg:long").integer)
        // 4 s moved, less the time passed (Redis counts on while this process stands frozen).
        let passed = Int((ContinuousClock.now - set) / .milliseconds(1))
        #expect(long > 55_000 - passed && long <= 56_000, "\(long) after \(passed) ms")
        #expect(try client.command("EXISTS", "rg:short") == .integer(0))
        #expect(try client.command("PTTL", "rg:forever") == .integer(-1))
        #expect(try client.command("ZRANGE", "rg:sends", "0", "-1", "WITHSCORES")
            == .array([.bulkString("a"), .bulkString("1796145773374"), .bulkString("b"), .bulkString("1796145775000")]))
        let sendsLeft = try client.runOut("rg:sends")
        #expect(sendsLeft <= 26_000 && sendsLeft > 25_000 - Int((ContinuousClock.now - set) / .milliseconds(1)), "\(sendsLeft)")
        #expect(try client.command("EXISTS", "rg:sends") == .integer(0))
        #expect(throws: TestSupportError.protocolViolation) { try client.runOut("rg:forever") }
    }

    @Test func serversStartedTogetherGetTheirOwnPortAndDirectory() async throws {
        let servers = try await withThrowingTaskGroup(of: RedisServer.self) { group in
            for _ in 0..<4 { group.addTask { try RedisServer() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        defer { servers.forEach { $0.stop() } }
        #expect(Set(servers.map(\.port)).count == 4)
        #expect(Set(servers.map(\.directory)).count == 4)
        for server in servers {
            #expect(try server.client().command("PING") == .simpleString("PONG"))
        }
    }

    @Test func restartKeepsAppendOnlyDataOnTheSamePort() throws {
        let redis = try RedisServer(.init(appendOnly: true))
        defer { redis.stop() }
        let firstPid = redis.pid
        try redis.client().command("SET", gateKey(.cooldown, "+8613800138000", purpose: "login"), "1", "PX", "600000")
        try redis.restart()
        #expect(redis.pid != firstPid)
        let client = try redis.client()
        #expect(try client.command("GET", gateKey(.cooldown, "+8613800138000", purpose: "login")) == .bulkString("1"))
        let pttl = try #require(try client.command("PTTL", gateKey(.cooldown, "+8613800138000", purpose: "login")).integer)
        #expect((590_000...600_000).contains(pttl))
    }

    @Test func killWithAppendFsyncAlwaysLosesNothing() throws {
        let redis = try RedisServer(.init(appendOnly: true, appendFsync: .always))
        defer { redis.stop() }
        try redis.client().command("SET", "k", "v")
        redis.kill()
        #expect(redis.pid == nil)
        #expect(throws: TestSupportError.connection) { try redis.client() }
        try redis.restart()
        #expect(try redis.client().command("GET", "k") == .bulkString("v"))
    }

    @Test func withoutAppendOnlyRestartStartsEmpty() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        try redis.client().command("SET", "k", "v")
        try redis.restart()
        #expect(try redis.client().command("DBSIZE") == .integer(0))
    }

    @Test func stopRemovesTheDirectoryAndFreesThePort() throws {
        let redis = try RedisServer()
        let directory = redis.directory
        #expect(FileManager.default.fileExists(atPath: directory + "/redis.conf"))
        redis.stop()
        redis.stop()  // idempotent
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(!LoopbackPort.isAccepting(redis.port))
        #expect(throws: TestSupportError.invalidState) { try redis.restart() }
    }

    @Test func pausedServerTimesOutAndResumes() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let client = try redis.client(timeout: .milliseconds(200))
        redis.pause()
        #expect(throws: TestSupportError.timeout) { try client.command("PING") }
        #expect(throws: TestSupportError.connection) { try client.command("PING") }  // closed after a timeout
        redis.resume()
        #expect(try redis.client().command("PING") == .simpleString("PONG"))
    }

    @Test func requiresPasswordAndListensOnUnixSocket() throws {
        let redis = try RedisServer(.init(unixSocket: true, password: "s3cret pass"))
        defer { redis.stop() }
        #expect(redis.url == "redis://default:s3cret%20pass@127.0.0.1:\(redis.port)/0")
        let socketPath = try #require(redis.unixSocketPath)
        #expect(redis.unixSocketURL == "unix://" + socketPath)
        let anonymous = try RedisTestClient(port: redis.port)
        #expect(try anonymous.command("PING").string == nil)  // -NOAUTH
        #expect(try redis.client().command("PING") == .simpleString("PONG"))
        let local = try RedisTestClient(unixSocketPath: socketPath, password: "s3cret pass")
        #expect(try local.command("PING") == .simpleString("PONG"))
    }

    @Test func reportsTheLogTailWhenRedisCannotStart() throws {
        let error = try #require(throws: TestSupportError.self) {
            try RedisServer(.init(extraConfiguration: ["no-such-directive yes"]))
        }
        #expect(error == .didNotStart)
        #expect(error.message.contains("no-such-directive"))
    }
}

@Suite("CommandRunner and ServerProcess", .ownThread)
struct CommandRunnerTests {
    @Test func capturesOutputAndExitCode() throws {
        let result = try CommandRunner.run(
            "/bin/sh", ["-c", "echo out; echo err >&2; cat; exit 3"], input: "from stdin\n")
        #expect(result.exitCode == 3)
        #expect(result.stdout == "out\nfrom stdin\n")
        #expect(result.stderr == "err\n")
        #expect(!result.timedOut)
    }

    @Test func terminatesACommandPastItsTimeout() throws {
        let result = try CommandRunner.run("/bin/sh", ["-c", "exec sleep 30"], timeout: .milliseconds(200))
        #expect(result.timedOut)
        #expect(result.status == .signaled(SIGTERM))
        #expect(result.duration < .seconds(5))
    }

    @Test func passesOnlyExplicitResendGateVariables() throws {
        setenv("RESENDGATE_FROM_SHELL", "leak", 1)
        let result = try CommandRunner.run(
            "/bin/sh", ["-c", "echo \"[$RESENDGATE_FROM_SHELL][$RESENDGATE_REDIS_URL]\""],
            environment: ["RESENDGATE_REDIS_URL": "redis://127.0.0.1:1/0"])
        #expect(result.stdout == "[][redis://127.0.0.1:1/0]\n")
    }

    @Test func serverProcessReportsItsPortAndStopsOnSigterm() throws {
        let server = try ServerProcess(
            "/bin/sh", ["-c", "trap 'echo draining; exit 0' TERM; echo 'listening on http://127.0.0.1:4321/'; while :; do sleep 0.05; done"])
        #expect(try server.waitForListeningPort() == 4321)
        let result = server.stop()
        #expect(result.status == .exited(0))
        #expect(result.stdout.contains("draining"))
        #expect(!server.isRunning)
    }

    @Test func findsTheBuiltResendgateExecutable() throws {
        let path = try BuiltProducts.executable(named: "resendgate")
        #expect(FileManager.default.isExecutableFile(atPath: path))
    }
}
