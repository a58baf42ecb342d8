import Foundation
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// `resendgate serve` hands its own log to the library: a Redis restart and a script flush
/// show up on stderr at `--log-level info`, with the worker, and no line holds a number.
@Suite("resendgate serve: the library's lines in the server's log")
struct ServerLogTests {
    /// Synchronous throughout (a child process, log lines polled for), so it runs on a
    /// thread of its own rather than on one of the two cooperative ones.
    @Test func reconnectAndScriptReloadReachTheServerLogWithoutANumber() async throws {
        try await onOwnThread {
            let gate = try TestGate(serve: ["--workers", "1", "--redis-timeout", "5s", "--log-level", "info"])
            defer { gate.stop(grace: .seconds(2)) }
            let (redis, server) = (gate.redis, try #require(gate.process))
            let client = gate.client(timeout: .seconds(5))
            #expect(try client.send(phone: "+8613800138000").status == 200)

            redis.kill()
            let refused = try client.send(phone: "+8613900139000")
            #expect(refused.status == 503, "\(refused)\n\(server.stderr)")
            _ = try server.waitForLine(containing: "connection lost")
            // A first connect that failed on a loaded machine printed one already.
            let earlier = server.lines(containing: "connected again after").count
            try redis.restart()
            let back = try server.waitForLine(containing: "connected again after", beyond: earlier)
            #expect(back.contains("level=info") && back.contains("worker 0: redis 127.0.0.1:\(redis.port)"), "\(back)")

            #expect(try redis.client().command("SCRIPT", "FLUSH") == .simpleString("OK"))
            // The default policy's send runs no script (plain commands); a peek does.
            #expect(try client.get("/v1/cooldowns/%2B8613700137000").status == 200)
            _ = try server.waitForLine(containing: "NOSCRIPT")

            let lost = try server.waitForLine(containing: "connection lost")
            #expect(lost.hasPrefix("level=warning"), "\(lost)")
            for digits in ["13800138000", "13900139000", "13700137000"] {
                #expect(!server.stderr.contains(digits), "the log holds a number:\n\(server.stderr)")
            }
        }
    }
}
