import Foundation
import ResendGateClient

/// `resendgate watch`'s client of one `text/event-stream` response over a blocking TCP
/// connection: the head, then the (chunked) body through the package's `ChunkedBody`
/// decoder and the app kit's `ServerSentEventParser`. It keeps no time of its own: a read
/// that waits past `silenceLimit` seconds ends the stream.
final class EventStreamClient {
    private let socket: WatchSocket
    private(set) var status: Int?
    private var head: [UInt8] = []
    private var chunked = false
    private var body: [UInt8] = []
    private var parser = ServerSentEventParser()
    private var events: [ServerSentEvent] = []

    /// Connects and sends `GET path` asking for an event stream.
    init(host: String, port: String, path: String, silenceLimit: Int) throws {
        socket = try WatchSocket(host: host, port: port, silenceLimit: silenceLimit)
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
            + "Accept: text/event-stream\r\nCache-Control: no-store\r\n\r\n"
        guard socket.send(Array(request.utf8)) else {
            socket.close()
            throw EventStreamError(description: "the connection closed while sending")
        }
    }

    deinit { socket.close() }

    /// Reads until the head has arrived; returns its status.
    func readStatus() throws -> Int {
        while status == nil { try feed(try receive()) }
        return status ?? 0
    }

    /// The next event (comments skipped). Throws when the stream ends, fails or stays silent.
    func nextEvent() throws -> ServerSentEvent {
        while events.isEmpty { try feed(try receive()) }
        return events.removeFirst()
    }

    private func receive() throws -> [UInt8] {
        guard let bytes = socket.receive() else {
            throw EventStreamError(description: socket.lastError ?? "the server closed the stream before it was done")
        }
        return bytes
    }

    private func feed(_ bytes: [UInt8]) throws {
        if status == nil {
            head += bytes
            guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            let lines = String(decoding: head[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let parts = lines[0].split(separator: " ")
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            chunked = lines.dropFirst().contains {
                $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked")
            }
            body = Array(head[end.upperBound...])
            head = []
        } else {
            body += bytes
        }
        guard chunked else {
            events += try parser.feed(body)
            body = []
            return
        }
        guard let decoded = ChunkedBody.decode(body) else { throw EventStreamError(description: "the server sent a malformed chunk") }
        body.removeFirst(decoded.consumed)
        events += try parser.feed(decoded.body)
        if decoded.isComplete && events.isEmpty { throw EventStreamError(description: "the server ended the stream before it was done") }
    }
}

/// Why a stream ended early, in words for the terminal.
struct EventStreamError: Error, CustomStringConvertible {
    let description: String
}

/// A blocking TCP connection (any host `getaddrinfo` resolves) with a silence limit on reads.
final class WatchSocket {
    private var fd: Int32 = -1
    private(set) var lastError: String?

    init(host: String, port: String, silenceLimit: Int) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, port, &hints, &list)
        guard resolved == 0, let first = list else {
            throw UsageError("cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let candidate = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if candidate >= 0 {
                if connect(candidate, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    fd = candidate
                    break
                }
                reason = String(cString: strerror(errno))
                Glibc.close(candidate)
            }
            entry = current.pointee.ai_next
        }
        guard fd >= 0 else { throw UsageError("cannot connect to \(host):\(port): \(reason)") }
        var timeout = timeval(tv_sec: silenceLimit, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// The next bytes; nil at the end of the stream, on an error or after the silence limit.
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(buffer[..<count]) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                lastError = errno == EAGAIN || errno == EWOULDBLOCK ? "no event or heartbeat for a long time" : String(cString: strerror(errno))
            }
            return nil
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}
