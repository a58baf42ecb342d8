import Foundation
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 23, "also seen": under a crowd, the server once closed a fresh client's
/// `/healthz` with no answer. A connection whose request waits in its socket, unread, is
/// not idle: eviction (at the connection cap, out of descriptors, over the memory budget)
/// passes it by. Made certain here: the server is stopped while the fresh client connects
/// and asks, so that it accepts that client and the next one in one burst, at its cap,
/// with every other connection busy.
@Suite("Abuse: eviction spares a client whose request waits", .serialized, .ownThread)
struct AbuseEvictionTests {
    @Test func aFreshClientWhoseRequestWaitsIsAnsweredAtTheCap() throws {
        let server = try AbuseServeProcess(["--workers", "1", "--max-connections", "3", "--redis-timeout", "10s"])
        defer { server.stop() }
        let client = server.client()
        // Two connections busy with sends that wait on a frozen Redis.
        server.redis.pause()
        defer { server.redis.resume() }
        var busy: [RawHTTPConnection] = []
        for index in 0..<2 {
            let connection = try RawHTTPConnection(port: server.port, timeout: .seconds(15))
            try connection.write(client.requestBytes(
                "POST", "/v1/sends", headers: [("Content-Type", "application/json")],
                body: Array(#"{"phone": "+861380013800\#(index)"}"#.utf8), keepAlive: true))
            busy.append(connection)
        }
        usleep(300_000)
        // The fresh client connects and asks while the server is stopped; another connects.
        server.process.signal(SIGSTOP)
        let fresh = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
        try fresh.write(client.requestBytes("GET", "/healthz", keepAlive: true))
        let next = try RawHTTPConnection(port: server.port, timeout: .seconds(10))
        usleep(100_000)
        server.process.signal(SIGCONT)
        let answer = try fresh.readResponse()
        #expect(answer.status == 200, "\(answer)")
        next.close()
        for connection in busy { connection.close() }
    }
}
