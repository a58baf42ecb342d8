import Foundation
import ResendGateServer
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 12, item 7: file descriptors. With `ulimit -n 1024` and the old default of
/// 10 000 connections per worker, 1 100 connections made accept() fail in a busy loop
/// (1.4 cores, 105 MB of stderr in 6 s, /healthz in 1.7 s). The default cap now comes
/// from RLIMIT_NOFILE, and a listener that runs out anyway pauses instead of spinning,
/// logs once per interval, and closes idle connections so /healthz still gets in.
@Suite("Abuse: file descriptors", .serialized, .ownThread)
struct AbuseFileDescriptorTests {
    /// Under `ulimit -n 1024` with the default cap, 1 100 idle connections arriving in
    /// one burst (the server is stopped while they connect): the cap (480 per worker for
    /// 2 workers) keeps the server below the limit even within the burst, so accept()
    /// never fails; the oldest idle connections are closed instead.
    @Test func theDefaultCapFitsTheOpenFileLimit() throws {
        try Self.allowOurselves(descriptors: 1_300)
        let server = try AbuseServeProcess(["--workers", "2"], openFileLimit: 1024)
        defer { server.stop() }
        let expected = ConnectionBudget(workers: 2, openFileLimit: 1024).defaultPerWorker
        #expect(expected == 480)
        #expect(server.process.stderr.contains("connection cap: \(expected) per worker, \(2 * expected) in all"),
                "\(server.process.stderr)")
        let report = try Self.flood(server, connections: 1_100, inOneBurst: true)
        #expect(report.cpuSeconds < 0.5, "\(report.cpuSeconds) s of CPU while 1 100 connections were open")
        #expect(report.slowestHealthCheck < .milliseconds(500), "/healthz took \(report.slowestHealthCheck)")
        #expect(try server.metric("resendgate_http_accept_failures_total") == 0, "accept() ran out of descriptors")
        #expect((try server.metric("resendgate_http_connections_evicted_total") ?? 0) >= Double(1_100 - 2 * expected))
        #expect(!server.process.stderr.contains("accept()"), "\(server.process.stderr)")
    }

    /// A cap set above what the limit allows (`--max-connections 10000` under
    /// `ulimit -n 256`), and 600 connections: accept() runs out of descriptors. The
    /// listener must pause (not spin), log at most once per worker per 5 s, and close
    /// idle connections so /healthz is still answered.
    @Test func aListenerOutOfDescriptorsPausesLogsOnceAndStillAnswers() throws {
        let server = try AbuseServeProcess(["--workers", "2", "--max-connections", "10000"], openFileLimit: 256)
        defer { server.stop() }
        #expect(server.process.stderr.contains("leaves room for about 96 per worker"), "\(server.process.stderr)")
        let report = try Self.flood(server, connections: 600)
        #expect((try server.metric("resendgate_http_accept_failures_total") ?? 0) > 0, "accept() never failed: the test does not test")
        #expect(report.cpuSeconds < 0.5, "\(report.cpuSeconds) s of CPU while accept() was failing")
        #expect(report.slowestHealthCheck < .seconds(1), "/healthz took \(report.slowestHealthCheck)")
        let stderr = server.process.stderr
        let lines = stderr.split(separator: "\n")
        let acceptLines = lines.filter { $0.contains("accept()") }
        #expect(acceptLines.count >= 1 && acceptLines.count <= 2, "\(acceptLines.count) accept lines:\n\(stderr.prefix(2_000))")
        #expect(stderr.utf8.count < 4_096, "\(stderr.utf8.count) bytes of stderr")
        #expect(try server.residentMiB() < AbuseConnectionMemoryTests.residentBoundMiB)
    }

    // MARK: - Helpers

    struct FloodReport {
        var cpuSeconds: Double
        var slowestHealthCheck: Duration
    }

    /// Opens `connections` idle connections (`inOneBurst`: while the server is stopped,
    /// so that it accepts them all in one go), then holds them for 2 s while /healthz is
    /// asked every 250 ms; returns the CPU the server spent meanwhile and the slowest check.
    static func flood(_ server: AbuseServeProcess, connections: Int, inOneBurst: Bool = false) throws -> FloodReport {
        let cpuBefore = try server.cpuSeconds()
        var idle: [RawHTTPConnection] = []
        idle.reserveCapacity(connections)
        if inOneBurst { server.process.signal(SIGSTOP) }
        defer { if inOneBurst { server.process.signal(SIGCONT) } }
        for _ in 0..<connections { idle.append(try RawHTTPConnection(port: server.port, timeout: .milliseconds(300))) }
        if inOneBurst { server.process.signal(SIGCONT) }
        var slowest: Duration = .zero
        for _ in 0..<8 {
            slowest = max(slowest, try server.timeHealthCheck())
            usleep(250_000)
        }
        let cpu = try server.cpuSeconds() - cpuBefore
        idle.removeAll()
        slowest = max(slowest, try server.timeHealthCheck())
        return FloodReport(cpuSeconds: cpu, slowestHealthCheck: slowest)
    }

    /// Raises this process's soft open-file limit to `descriptors` (within its hard
    /// limit): the attack's client ends live here.
    static func allowOurselves(descriptors: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < rlim_t(descriptors) else { return }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(descriptors))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_cur >= rlim_t(descriptors), "this process may not open \(descriptors) files")
    }
}
