import Foundation
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Review finding 3 (issue 12, items 6 and 7): one countdown token, with no API key,
/// opened event streams until the server had no connection or descriptor left: a stream
/// counts as busy for its whole life, so it was never evicted, and /healthz timed out.
/// Now a worker keeps at most 4 streams per token and half its connection cap in all,
/// closing the OLDEST with the `shutdown` event, and at the connection cap or out of
/// descriptors with nothing idle it closes the oldest stream the same way.
@Suite("Abuse: stream exhaustion", .serialized, .ownThread)
struct AbuseStreamExhaustionTests {
    /// The final frame of a stream closed to make room (the shutdown event).
    static let shutdownFrame = AbuseShutdownTests.shutdownFrame

    /// The review's attack: 300 streams of one token against a gate under `ulimit -n 300`
    /// (a cap of 252 connections). Only the newest 4 stay open; every older one got the
    /// shutdown event and was closed; /healthz answers at once.
    @Test func oneTokenKeepsAtMostFourStreamsPerWorker() throws {
        try AbuseFileDescriptorTests.allowOurselves(descriptors: 1_024)
        let server = try AbuseServeProcess(["--workers", "1", "--cooldown", "300s"], openFileLimit: 300)
        defer { server.stop() }
        let token = try AbuseConnectionMemoryTests.countdownToken(server, phone: "+8613800201000")
        let streams = try Self.openStreams(server, tokens: [token], each: 300)
        #expect(streams.count == 300, "only \(streams.count) streams started")
        #expect(try server.metric("resendgate_sse_streams") == 4)
        #expect(try server.metric("resendgate_sse_evicted_total") == 296)
        #expect(try server.timeHealthCheck(timeout: .seconds(2)) < .seconds(2))
        for (index, stream) in streams.enumerated() {
            let evicted = index < streams.count - 4
            Self.expectEnd(of: stream, evicted: evicted, "stream \(index)")
        }
    }

    /// 8 tokens × 4 streams on a worker capped at 40 connections: at most 20 streams stay
    /// open (half the cap), the oldest 12 were closed with the shutdown event, and a plain
    /// request still gets in.
    @Test func aWorkerKeepsAtMostHalfItsConnectionCapInStreams() throws {
        let server = try AbuseServeProcess(["--workers", "1", "--cooldown", "300s", "--max-connections", "40"])
        defer { server.stop() }
        let tokens = try (0..<8).map { try AbuseConnectionMemoryTests.countdownToken(server, phone: "+86138002010\($0)0") }
        let streams = try Self.openStreams(server, tokens: tokens, each: 4)
        #expect(streams.count == 32)
        #expect(try server.metric("resendgate_sse_streams") == 20)
        #expect(try server.metric("resendgate_sse_evicted_total") == 12)
        #expect(try server.timeHealthCheck(timeout: .seconds(2)) < .seconds(2))
        for (index, stream) in streams.enumerated() {
            Self.expectEnd(of: stream, evicted: index < 12, "stream \(index)")
        }
    }

    /// A cap set far above the open-file limit (`--max-connections 10000` under `ulimit -n
    /// 128`): streams of 40 tokens (4 each) run the worker out of descriptors with no idle
    /// connection to close. The listener closes the oldest streams instead, so every new
    /// stream and /healthz still get in.
    @Test func outOfDescriptorsWithOnlyStreamsOpenTheOldestStreamsAreClosed() throws {
        try AbuseFileDescriptorTests.allowOurselves(descriptors: 1_024)
        let server = try AbuseServeProcess(
            ["--workers", "1", "--cooldown", "300s", "--max-connections", "10000"], openFileLimit: 128)
        defer { server.stop() }
        let tokens = try (0..<40).map { try AbuseConnectionMemoryTests.countdownToken(server, phone: "+8613800202\(100 + $0)") }
        let streams = try Self.openStreams(server, tokens: tokens, each: 4)
        #expect(streams.count == 160, "only \(streams.count) of 160 streams started")
        #expect((try server.metric("resendgate_http_accept_failures_total") ?? 0) > 0, "never out of descriptors: the test does not test")
        let open = try #require(try server.metric("resendgate_sse_streams"))
        #expect(open < 128 && open > 0, "\(open) streams open")
        #expect(try server.metric("resendgate_sse_evicted_total") == 160 - open)
        #expect(try server.timeHealthCheck(timeout: .seconds(2)) < .seconds(2))
        for (index, stream) in streams.prefix(8).enumerated() {
            Self.expectEnd(of: stream, evicted: true, "stream \(index)")
        }
    }

    /// At the connection cap with nothing idle (a cap of 1, held by a stream, which is
    /// busy for its whole life), a new connection closes the oldest stream with the
    /// shutdown event instead of passing the cap.
    @Test func atTheConnectionCapWithOnlyStreamsTheOldestStreamMakesRoom() throws {
        let server = try AbuseServeProcess(["--workers", "1", "--cooldown", "300s", "--max-connections", "1"])
        defer { server.stop() }
        let token = try AbuseConnectionMemoryTests.countdownToken(server, phone: "+8613800204000")
        let streams = try Self.openStreams(server, tokens: [token], each: 1)
        try #require(streams.count == 1)
        #expect(try server.timeHealthCheck(timeout: .seconds(2)) < .seconds(2))
        Self.expectEnd(of: streams[0], evicted: true, "the stream")
        #expect(try server.metric("resendgate_sse_evicted_total") == 1)
        #expect(try server.metric("resendgate_sse_streams") == 0)
    }

    // MARK: - Helpers

    struct Stream {
        let connection: RawHTTPConnection
        let head: [UInt8]
    }

    /// Opens `each` streams of every token, one token after another, each read up to its
    /// first tick; stops at the first that does not start.
    static func openStreams(_ server: AbuseServeProcess, tokens: [String], each: Int) throws -> [Stream] {
        var streams: [Stream] = []
        for token in tokens {
            for _ in 0..<each {
                let connection = try RawHTTPConnection(port: server.port, timeout: .milliseconds(300))
                try connection.write(Array("GET /v1/countdowns/\(token)/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                let head = connection.read(until: "event: tick", timeout: .seconds(3))
                guard hasBytes(head, Array("event: tick".utf8)) else {
                    Issue.record("stream \(streams.count) did not start: \(String(decoding: head.prefix(200), as: UTF8.self))")
                    return streams
                }
                streams.append(Stream(connection: connection, head: head))
            }
        }
        return streams
    }

    /// An evicted stream ended its chunks with the shutdown event and was closed; any other
    /// is still open.
    static func expectEnd(of stream: Stream, evicted: Bool, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if evicted {
            let rest = stream.connection.readUntilClosed(timeout: .seconds(2))
            #expect(rest.closed, "\(what) still open", sourceLocation: sourceLocation)
            let body = dechunkedBody(stream.head + rest.bytes).map { String(decoding: $0, as: UTF8.self) }
            #expect(body?.hasSuffix("\n\n" + shutdownFrame) == true, "\(what) ended with: \(String(describing: body?.suffix(120)))",
                    sourceLocation: sourceLocation)
        } else {
            let rest = stream.connection.readUntilClosed(timeout: .milliseconds(100))
            #expect(!rest.closed, "\(what) was closed", sourceLocation: sourceLocation)
        }
    }
}
