import Foundation
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
            let serve = ["serve", "--port", "0", "--redis", redis.url, "--region", "CN", "--log-level", "warning"] + TestPurposes.arguments + arguments
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

/// One TCP connection to 127.0.0.1 that an attacker drives byte by byte: it sends what
/// it is told, for as long as the server takes it, and reads (or not) as it pleases.
final class AbuseConnection {
    let fd: Int32

    /// `receiveBuffer` shrinks the socket's receive buffer (the window the server may
    /// fill), `sendBuffer` its send buffer; every send waits at most `sendTimeout` for room.
    init(port: Int, receiveBuffer: Int32? = nil, sendBuffer: Int32? = nil, sendTimeout: Duration = .milliseconds(300)) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.system("socket(): \(String(cString: strerror(errno)))") }
        if var bytes = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        if var bytes = sendBuffer {
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var wait = timeval(tv_sec: Int(sendTimeout.components.seconds),
                           tv_usec: Int(sendTimeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawHTTPError.system("connect(): \(String(cString: strerror(code)))")
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends as much of `count` bytes of junk as the server takes before a send waits
    /// past the send timeout (or `within` runs out); returns how many it took.
    func flood(_ count: Int, within: Duration = .seconds(5)) -> Int {
        var sent = 0
        let deadline = ContinuousClock.now + within
        while sent < count && ContinuousClock.now < deadline {
            let taken = flood(bytes: Self.junk.prefix(count - sent))
            sent += taken
            if taken == 0 { break }
        }
        return sent
    }

    private static let junk = [UInt8](repeating: UInt8(ascii: "x"), count: 256 * 1024)

    /// Sends as much of `bytes` as the server takes before a send waits past the send
    /// timeout; returns how many it took.
    func flood(bytes: some Collection<UInt8>) -> Int {
        let bytes = Array(bytes)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                sent += written
            } else if !(written < 0 && errno == EINTR) {
                break
            }
        }
        return sent
    }

    /// Sends every byte (the server is expected to take them).
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 || (written < 0 && errno == EINTR) else {
                throw RawHTTPError.system("send(): \(String(cString: strerror(errno)))")
            }
            offset += max(0, written)
        }
    }

    /// Reads until what arrived contains `marker` (or `timeout` passes); returns it all.
    func read(until marker: String, timeout: Duration = .seconds(5)) -> [UInt8] {
        let wanted = Array(marker.utf8)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && !hasBytes(received, wanted) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += chunk[..<count]
        }
        return received
    }

    /// Reads until the server closes the connection, for at most `timeout` and `limit`
    /// bytes; returns what arrived and whether the server closed it.
    func readUntilClosed(timeout: Duration, limit: Int = 64 << 20) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && received.count < limit {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 || errno == ECONNRESET {
                return (received, true)
            }
        }
        return (received, false)
    }
}

/// Whether `needle` occurs in `haystack`.
func hasBytes(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    countOccurrences(of: needle, in: haystack) > 0
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
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let headEnd = (0...(max(0, raw.count - 4))).first(where: { raw.count >= $0 + 4 && raw[$0..<($0 + 4)].elementsEqual(separator) }) else {
        return nil
    }
    var body: [UInt8] = []
    var index = headEnd + 4
    while true {
        guard let lineEnd = (index..<max(index, raw.count - 1)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 }),
              let size = Int(String(decoding: raw[index..<lineEnd], as: UTF8.self), radix: 16) else { return nil }
        index = lineEnd + 2
        if size == 0 { return body }
        guard raw.count >= index + size + 2 else { return nil }
        body += raw[index..<(index + size)]
        index += size + 2
    }
}
