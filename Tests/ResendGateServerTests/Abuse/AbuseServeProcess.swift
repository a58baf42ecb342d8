import Foundation
import ResendGateClient
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real `resendgate serve` child process on a real Redis, for the resource-abuse
/// tests: they attack it from this process and read what it costs the child from
/// `/proc/<pid>` (its RSS, its CPU time) and from what it wrote on stderr.
final class AbuseServeProcess {
    let redis: RedisServer
    let process: ServerProcess
    let port: Int

    /// Starts `resendgate serve --port 0 --redis <its own Redis> --region CN` with
    /// `arguments`, under a soft and hard RLIMIT_NOFILE of `openFileLimit` when given
    /// (set by `sh -c 'ulimit -n N; exec ...'`, so the pid is the server's), and
    /// waits until every worker is ready.
    init(_ arguments: [String] = [], openFileLimit: Int? = nil) throws {
        redis = try RedisServer()
        do {
            let binary = try BuiltProducts.executable(named: "resendgate")
            let serve = ["serve", "--port", "0", "--redis", redis.url, "--region", "CN", "--log-level", "warning"] + arguments
            if let openFileLimit {
                process = try ServerProcess("/bin/sh", ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", binary] + serve)
            } else {
                process = try ServerProcess(binary, serve)
            }
            port = try process.waitForListeningPort()
            let client = HTTPTestClient(port: port, timeout: .seconds(3))
            try ServeCommandTests.poll(timeout: .seconds(5)) { try client.get("/readyz").status == 200 }
        } catch {
            redis.stop()
            throw error
        }
    }

    func stop() {
        process.stop(grace: .seconds(2))
        redis.stop()
    }

    func client(timeout: Duration = .seconds(3)) -> HTTPTestClient {
        HTTPTestClient(port: port, timeout: timeout)
    }

    /// The child's resident memory now, in MiB (VmRSS of /proc/<pid>/status).
    func residentMiB() throws -> Double {
        let status = try String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kibibytes = try #require(line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Double($0) })
        return kibibytes / 1024
    }

    /// CPU time the child has used so far, user and system, in seconds (/proc/<pid>/stat).
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(process.pid)/stat", encoding: .utf8)
        // After the command name in parentheses: state is field 3, utime 14, stime 15.
        let fields = try #require(stat.split(separator: ")").last).split(separator: " ")
        let ticks = try #require(Double(fields[11])) + (try #require(Double(fields[12])))
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// How long `GET /healthz` takes on a new connection; fails the test if it is not 200.
    func timeHealthCheck(timeout: Duration = .seconds(5), sourceLocation: SourceLocation = #_sourceLocation) throws -> Duration {
        let started = ContinuousClock.now
        let answer = try client(timeout: timeout).get("/healthz")
        #expect(answer.status == 200, "\(answer)", sourceLocation: sourceLocation)
        return ContinuousClock.now - started
    }

    /// A `/metrics` sample.
    func metric(_ name: String) throws -> Double? {
        try PrometheusSamples(try client().get("/metrics").text).value(name, "")
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
