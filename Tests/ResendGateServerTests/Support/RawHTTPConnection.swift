import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why a raw HTTP exchange failed.
enum RawHTTPError: Error, Equatable, CustomStringConvertible {
    /// `connect()` was refused: nothing listens on the port.
    case refused
    /// The server closed the connection (or reset it) before a whole response arrived.
    case closed(afterBytes: Int)
    /// No (whole) response within the read deadline.
    case timedOut(afterBytes: Int)
    case malformed(String)
    case system(String)

    var description: String {
        switch self {
        case .refused: "connection refused"
        case .closed(let count): "connection closed after \(count) response bytes"
        case .timedOut(let count): "timed out after \(count) response bytes"
        case .malformed(let why): "malformed response: \(why)"
        case .system(let what): what
        }
    }
}

/// One HTTP/1.1 response, read byte for byte off the socket.
struct RawHTTPResponse: CustomStringConvertible {
    let statusLine: String
    let status: Int
    /// In the order received, names as sent.
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    /// The first value of a header, matched without case.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of a header, matched without case.
    func headers(named name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var description: String {
        "\(statusLine)\n" + headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n") + "\n\n" + text.prefix(2000)
    }
}

/// A blocking HTTP/1.1 client over one TCP connection to 127.0.0.1, written for tests:
/// it sends exactly the bytes it is given (so malformed and ambiguous requests can be
/// sent) and reads responses by their own framing (Content-Length, chunked, or close).
final class RawHTTPConnection {
    private var fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `127.0.0.1:port`; every later read and write waits at most `timeout`.
    /// `receiveBuffer` shrinks the socket's receive buffer (and so the window the server
    /// may fill) to about that many bytes; `sendBuffer` its send buffer.
    init(port: Int, timeout: Duration = .seconds(10), receiveBuffer: Int32? = nil, sendBuffer: Int32? = nil) throws(RawHTTPError) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket(): \(String(cString: strerror(errno)))") }
        if var bytes = receiveBuffer, setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            let code = errno
            Glibc.close(fd)
            fd = -1
            throw .system("setsockopt(SO_RCVBUF): \(String(cString: strerror(code)))")
        }
        if var bytes = sendBuffer, setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            let code = errno
            Glibc.close(fd)
            fd = -1
            throw .system("setsockopt(SO_SNDBUF): \(String(cString: strerror(code)))")
        }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds),
                              tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        if seconds.tv_sec == 0 && seconds.tv_usec == 0 { seconds.tv_usec = 1 }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            fd = -1
            throw code == ECONNREFUSED ? .refused : .system("connect(): \(String(cString: strerror(code)))")
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Closes with a reset (SO_LINGER 0) instead of a FIN: the server's next read fails.
    func reset() {
        guard fd >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Half-closes the connection: the server reads end-of-file, and may still answer.
    func shutdownWrite() {
        if fd >= 0 { _ = shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Writes every byte.
    func write(_ bytes: [UInt8]) throws(RawHTTPError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                throw .system("send(): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Writes as much of `bytes` as the connection takes before a write waits past the
    /// timeout, and returns how many that was.
    func writeSome(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                offset += written
            } else if !(written < 0 && errno == EINTR) {
                break
            }
        }
        return offset
    }

    func write(_ text: String) throws(RawHTTPError) {
        try write(Array(text.utf8))
    }

    /// Reads one response. `bodyless` for the answer to a HEAD request.
    func readResponse(bodyless: Bool = false) throws(RawHTTPError) -> RawHTTPResponse {
        let headEnd = try fill { Self.find([13, 10, 13, 10], in: $0) }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw .malformed("status line \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let response = { (body: [UInt8]) in RawHTTPResponse(statusLine: statusLine, status: status, headers: headers, body: body) }
        if bodyless || status == 204 || status == 304 || (100..<200).contains(status) { return response([]) }
        let lookup = { (name: String) in headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        if lookup("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            return response(try readChunkedBody())
        }
        if let lengthText = lookup("Content-Length") {
            guard let length = Int(lengthText), length >= 0 else { throw .malformed("Content-Length \(lengthText)") }
            _ = try fill { $0.count >= length ? length : nil }
            let body = Array(buffer[..<length])
            buffer.removeFirst(length)
            return response(body)
        }
        // Neither: the body runs until the server closes.
        while (try? readMore()) != nil {}
        defer { buffer.removeAll() }
        return response(buffer)
    }

    /// True when the server closes this connection within `timeout` (EOF or reset) without
    /// sending anything more.
    func closedByPeer(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = recv(fd, &byte, 1, 0)
            if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
            if count > 0 { return false }
        }
        return false
    }

    // MARK: - Reading

    private func readChunkedBody() throws(RawHTTPError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try fill { Self.find([13, 10], in: $0) }
            let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                throw .malformed("chunk size \(sizeText)")
            }
            buffer.removeFirst(lineEnd + 2)
            if size == 0 {
                // Trailers, then an empty line.
                while true {
                    let end = try fill { Self.find([13, 10], in: $0) }
                    buffer.removeFirst(end + 2)
                    if end == 0 { return body }
                }
            }
            _ = try fill { $0.count >= size + 2 ? size : nil }
            body += buffer[..<size]
            buffer.removeFirst(size + 2)
        }
    }

    /// Reads until `ready` finds what it looks for in the buffer, and returns its answer.
    private func fill(until ready: ([UInt8]) -> Int?) throws(RawHTTPError) -> Int {
        while true {
            if let found = ready(buffer) { return found }
            try readMore()
        }
    }

    private func readMore() throws(RawHTTPError) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
                return
            }
            if count == 0 { throw .closed(afterBytes: buffer.count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw .timedOut(afterBytes: buffer.count)
            case ECONNRESET: throw .closed(afterBytes: buffer.count)
            default: throw .system("recv(): \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
