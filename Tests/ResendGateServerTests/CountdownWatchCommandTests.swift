import Foundation
import ResendGateTestSupport
import Testing

/// `resendgate watch` end to end: the built binary against an in-process server.
@Suite("resendgate watch: a terminal thin client of the SSE stream", .serialized, .ownThread)
struct CountdownWatchCommandTests {
    static func watch(_ arguments: [String]) throws -> CommandResult {
        try CommandRunner.run(try BuiltProducts.executable(named: "resendgate"), ["watch"] + arguments,
                              environment: ["LANG": "C"], timeout: .seconds(20))
    }

    @Test func followsTheCountdownOneLinePerChangeAndExitsZeroWhenDone() throws {
        let server = try CountdownTestServer(cooldown: "2s")
        defer { server.stop() }
        let token = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        let result = try Self.watch([token, "--server", "http://127.0.0.1:\(server.port)"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "Resend in 2s\nResend in 1s\nYou can resend now\n")
        #expect(result.duration > .milliseconds(1_500))
    }

    @Test func speaksChineseWhenAsked() throws {
        let server = try CountdownTestServer(cooldown: "1s")
        defer { server.stop() }
        let token = try #require(try server.send("+8613800138000").json()["countdown_token"] as? String)
        let result = try Self.watch([token, "--server", "http://127.0.0.1:\(server.port)", "--lang", "zh"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout == "1秒后重新发送\n现在可以重新发送\n")
    }

    @Test func unknownOrMalformedTokensExitTwo() throws {
        let server = try CountdownTestServer()
        defer { server.stop() }
        let unknown = try Self.watch(["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "--server", "http://127.0.0.1:\(server.port)"])
        #expect(unknown.exitCode == 2)
        #expect(unknown.stderr.contains("unknown or expired countdown token"))
        #expect(try Self.watch(["not-a-token", "--server", "http://127.0.0.1:\(server.port)"]).exitCode == 2)
    }

    @Test func anUnreachableServerExitsOne() throws {
        let port = try LoopbackPort.free()
        let result = try Self.watch(["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "--server", "http://127.0.0.1:\(port)"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("cannot connect"))
    }
}
