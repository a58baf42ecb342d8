import Foundation
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real redis-server and an in-process HTTP server on port 0, for the countdown tests.
/// (Named apart from other suites' helpers; another engineer adds files here too.)
final class CountdownTestServer {
    let redis: RedisServer
    let server: HTTPServer
    var port: Int { server.port }

    init(cooldown: String = "60s", apiKeys: [String] = [], workers: Int = 1) throws {
        redis = try RedisServer()
        do {
            let gate = try GateConfiguration(
                redis: try RedisConfiguration(url: redis.url), policies: PolicySet(fallback: Policy(ladder: try Policy.parseLadder(cooldown))))
            let configuration = try ServerConfiguration(port: 0, workers: workers, apiKeys: apiKeys.map { APIKey($0) }, logLevel: .off)
            server = try HTTPServer(configuration: configuration, gate: gate)
        } catch {
            redis.stop()
            throw error
        }
    }

    func stop() {
        server.shutdown()
        redis.stop()
    }

    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) throws -> CountdownTestResponse {
        let socket = try CountdownTestSocket(port: port)
        defer { socket.close() }
        try socket.send(Self.head(method, path, body: body, headers: headers))
        return try CountdownTestResponse(reading: socket)
    }

    /// `POST /v1/sends` for `phone`; returns the response.
    func send(_ phone: String, key: String? = nil) throws -> CountdownTestResponse {
        var headers = ["Content-Type": "application/json"]
        if let key { headers["Authorization"] = "Bearer \(key)" }
        return try request("POST", "/v1/sends", body: "{\"phone\": \"\(phone)\"}", headers: headers)
    }

    /// Opens `GET path` and returns the socket once the request is written.
    func openStream(_ path: String) throws -> CountdownTestSocket {
        let socket = try CountdownTestSocket(port: port)
        try socket.send(Self.head("GET", path, body: nil, headers: ["Accept": "text/event-stream"]))
        return socket
    }

    /// `resendgate_sse_streams` from `/metrics`.
    func openStreams() throws -> Int {
        try gauge("resendgate_sse_streams")
    }

    /// A gauge's value from `/metrics`; -1 when absent.
    func gauge(_ name: String) throws -> Int {
        let text = try request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
    }

    static func head(_ method: String, _ path: String, body: String?, headers: [String: String]) -> String {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "Connection: close\r\n\r\n"
        return text + (body ?? "")
    }
}

/// A response read to the end of the connection (every request asks `Connection: close`).
struct CountdownTestResponse {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw CountdownTestError("not a JSON object: \(text)")
        }
        return object
    }

    init(reading socket: CountdownTestSocket) throws {
        var bytes: [UInt8] = []
        while let chunk = try socket.receive() { bytes += chunk }
        guard let split = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { throw CountdownTestError("no header end") }
        let head = String(decoding: bytes[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        status = Int(head[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        self.headers = headers
        let rest = Array(bytes[split.upperBound...])
        body = headers["transfer-encoding"] == "chunked" ? CountdownTestSocket.dechunk(rest) : rest
    }
}

/// A blocking loopback TCP socket with a receive deadline.
final class CountdownTestSocket {
    private var fd: Int32

    init(port: Int, timeout: Duration = .seconds(5)) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CountdownTestError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); throw CountdownTestError("connect to \(port) failed") }
        setTimeout(timeout)
    }

    deinit { close() }

    func setTimeout(_ timeout: Duration) {
        let microseconds = Int(timeout / .microseconds(1))
        var value = timeval(tv_sec: microseconds / 1_000_000, tv_usec: microseconds % 1_000_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw CountdownTestError("send failed") }
            offset += written
        }
    }

    /// The next bytes, or nil at the end of the stream; throws past the deadline.
    func receive() throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 { return Array(buffer[..<count]) }
        if count == 0 { return nil }
        throw CountdownTestError("recv: \(String(cString: strerror(errno)))")
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    /// Decodes a complete or partial chunked body.
    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstRange(of: Array("\r\n".utf8)) {
            let size = Int(String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
            let start = lineEnd.upperBound
            guard size > 0, start + size <= bytes.count else { break }
            out += bytes[start..<start + size]
            index = min(bytes.count, start + size + 2)
        }
        return out
    }
}

/// Reads server-sent events off an open stream, one at a time.
final class CountdownEventReader {
    struct Event: Equatable {
        var name: String
        var data: String
    }

    let socket: CountdownTestSocket
    private var raw: [UInt8] = []
    private var decodedUpTo = 0
    private var text = ""
    private(set) var head: String?
    private(set) var ended = false

    init(_ socket: CountdownTestSocket) {
        self.socket = socket
    }

    /// The next event or comment (`name` ":" for a comment), or nil when the stream ended.
    func next() throws -> Event? {
        while true {
            if let event = takeEvent() { return event }
            if ended { return nil }
            guard let chunk = try socket.receive() else { ended = true; continue }
            raw += chunk
            if head == nil, let split = raw.firstRange(of: Array("\r\n\r\n".utf8)) {
                head = String(decoding: raw[..<split.lowerBound], as: UTF8.self)
                raw = Array(raw[split.upperBound...])
            }
            if head != nil {
                text = String(decoding: CountdownTestSocket.dechunk(raw), as: UTF8.self)
            }
        }
    }

    private func takeEvent() -> Event? {
        let unread = text.dropFirst(decodedUpTo)
        guard let end = unread.range(of: "\n\n") else { return nil }
        let block = unread[..<end.lowerBound]
        decodedUpTo += unread.distance(from: unread.startIndex, to: end.upperBound)
        var event = Event(name: "", data: "")
        for line in block.split(separator: "\n") {
            if line.hasPrefix(":") { event.name = ":"; event.data = line.dropFirst().trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
        }
        return event
    }
}

struct CountdownTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
