import Foundation
import ResendGateTestSupport
import Testing

/// `resendgate serve` hands its own log to the library: a Redis restart and a script flush
/// show up on stderr at `--log-level info`, with the worker, and no line holds a number.
@Suite("resendgate serve: the library's lines in the server's log")
struct ServerLogTests {
    @Test func reconnectAndScriptReloadReachTheServerLogWithoutANumber() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let server = try ServerProcess(try BuiltProducts.executable(named: "resendgate"), [
            "serve", "--port", "0", "--workers", "1", "--redis", redis.url, "--redis-timeout", "500ms", "--log-level", "info",
        ] + TestPurposes.arguments)
        defer { server.stop(grace: .seconds(2)) }
        let port = try server.waitForListeningPort()
        let client = HTTPTestClient(port: port, timeout: .seconds(5))
        try ServeCommandTests.poll(timeout: .seconds(5)) { try client.get("/readyz").status == 200 }
        #expect(try client.send(phone: "+8613800138000").status == 200)

        redis.kill()
        #expect(try client.send(phone: "+8613900139000").status == 503)
        _ = try server.waitForLine(containing: "connection lost")
        try redis.restart()
        let back = try server.waitForLine(containing: "connected again after")
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
