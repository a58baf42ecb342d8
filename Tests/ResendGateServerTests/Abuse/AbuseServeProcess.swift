import Foundation
import ResendGateClient
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An abuse suite's child `resendgate serve` on a Redis of its own (a `TestGate`), and
/// what every such suite reads of it.
protocol AbuseChildGate {
    var gate: TestGate { get }
}

extension AbuseChildGate {
    var redis: RedisServer { gate.redis }
    var port: Int { gate.port }
    /// The child `resendgate serve`.
    var process: ServerProcess { gate.process! }
}

/// A real `resendgate serve` child process on a real Redis, for the resource-abuse
/// tests: they attack it from this process and read what it costs the child from
/// `/proc/<pid>` (its RSS, its CPU time) and from what it wrote on stderr.
final class AbuseServeProcess: AbuseChildGate {
    let gate: TestGate

    /// Starts `resendgate serve --port 0 --redis <its own Redis> --region CN` with
    /// `arguments`, under a soft and hard RLIMIT_NOFILE of `openFileLimit` when given,
    /// and waits until every worker is ready.
    init(_ arguments: [String] = [], openFileLimit: Int? = nil) throws {
        gate = try TestGate(serve: ["--region", "CN", "--log-level", "warning"] + arguments, openFileLimit: openFileLimit)
    }

    func stop() {
        gate.stop(grace: .seconds(2))
    }

    func client(timeout: Duration = .seconds(3)) -> HTTPTestClient {
        gate.client(timeout: timeout)
    }

    /// The child's resident memory now, in MiB (VmRSS of /proc/<pid>/status).
    func residentMiB() throws -> Double {
        Double(try gate.residentBytes()) / (1024 * 1024)
    }

    /// CPU time the child has used so far, user and system, in seconds (/proc/<pid>/stat).
    func cpuSeconds() throws -> Double {
        try gate.cpuSeconds()
    }

    /// How long `GET /healthz` takes on a new connection; fails the test if it is not 200.
    /// (AddressSanitizer's runs wait five times as long: `ResponsivenessBounds`.) The time
    /// this test process ran, its stalls left out: a test frozen while the gate (a process
    /// of its own) answered did not make the gate slow.
    func timeHealthCheck(
        timeout: Duration = ResponsivenessBounds.healthCheck(.seconds(5)), sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Duration {
        let started = StallWatch.mark()
        let answer = try client(timeout: timeout).get("/healthz")
        #expect(answer.status == 200, "\(answer)", sourceLocation: sourceLocation)
        return StallWatch.shared.ran(since: started)
    }

    /// Once a crowd's clients are gone: waits until at most one connection is open, then
    /// expects the child's RSS back within `slack` MiB of `before` (where `MemoryBounds`
    /// are asserted) within `grace`. `peak` is what it reached meanwhile, for the message.
    func expectMemoryGivenBack(
        before: Double, peak: Double, slack: Double, within grace: Duration, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try ServeCommandTests.poll(timeout: .seconds(5), sourceLocation: sourceLocation) {
            try metric("resendgate_http_connections_open") ?? 99 <= 1
        }
        var after = try residentMiB()
        let deadline = ContinuousClock.now + grace
        while MemoryBounds.asserted && after > before + slack && ContinuousClock.now < deadline {
            usleep(100_000)
            after = try residentMiB()
        }
        #expect(!MemoryBounds.asserted || after <= before + slack, "RSS \(before) → \(peak) → \(after) MiB: not given back",
                sourceLocation: sourceLocation)
    }

    /// A `/metrics` sample.
    func metric(_ name: String) throws -> Double? {
        try PrometheusSamples(try client(timeout: ResponsivenessBounds.healthCheck(.seconds(3))).get("/metrics").text).value(name, "")
    }
}

/// Whether `needle` occurs in `haystack`.
func hasBytes(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    RawHTTPConnection.find(needle, in: haystack) != nil
}

/// How many times `needle` occurs in `haystack` (not overlapping).
func countOccurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
    guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
    var count = 0
    var index = 0
    while index <= haystack.count - needle.count {
        if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
            count += 1
            index += needle.count
        } else {
            index += 1
        }
    }
    return count
}

/// The body of a chunked HTTP response whose bytes (head included) are `raw`; nil when
/// the chunks do not parse or do not end.
func dechunkedBody(_ raw: [UInt8]) -> [UInt8]? {
    guard let headEnd = RawHTTPConnection.find([13, 10, 13, 10], in: raw),
          let decoded = ChunkedBody.decode(raw[(headEnd + 4)...]), decoded.isComplete else { return nil }
    return decoded.body
}
