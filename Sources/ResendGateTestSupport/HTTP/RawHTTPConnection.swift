import Foundation
import ResendGateClient

/// The tests' one blocking HTTP/1.1 client connection to 127.0.0.1. It sends exactly the
/// bytes it is given (so pipelined, malformed and hostile requests can be sent, or a flood
/// the server has to refuse), reads responses by their own framing (Content-Length,
/// chunked, or close) and server-sent events (`EventStreamReader`). Every read and write
/// waits at most the connection's timeout.
public final class RawHTTPConnection {
    private let socket: BlockingSocket
    /// Bytes read off the socket and not yet handed out.
    var buffer: [UInt8] = []

    /// Connects to `127.0.0.1:port`; every later read and write waits at most `timeout`.
    /// `receiveBuffer` shrinks the socket's receive buffer (and so the window the server
    /// may fill) to about that many bytes; `sendBuffer` its send buffer.
    public init(port: Int, timeout: Duration = .seconds(10), receiveBuffer: Int32? = nil, sendBuffer: Int32? = nil) throws(RawHTTPError) {
        switch BlockingSocket.open(port: port, timeout: timeout, receiveBuffer: receiveBuffer, sendBuffer: sendBuffer) {
        case .success(let socket): self.socket = socket
        case .failure(let failure): throw failure.isRefused ? .refused : .system(failure.description)
        }
    }

    /// The socket's descriptor (to find the server's end of it in `/proc`).
    public var fd: Int32 { socket.fd }

    public func close() { socket.close() }

    /// Closes with a reset (SO_LINGER 0) instead of a FIN: the server's next read fails.
    public func reset() { socket.reset() }

    /// Half-closes the connection: the server reads end-of-file, and may still answer.
    public func shutdownWrite() { socket.shutdownWriting() }

    // MARK: - Writing

    /// Writes every byte.
    public func write(_ bytes: [UInt8]) throws(RawHTTPError) {
        if let failure = socket.write(bytes).failure { throw .system(failure.description) }
    }

    public func write(_ text: String) throws(RawHTTPError) {
        try write(Array(text.utf8))
    }

    /// Writes as much of `bytes` as the connection takes before a write waits past the
    /// timeout, and returns how many that was.
    public func writeSome(_ bytes: some Collection<UInt8>) -> Int {
        socket.write(bytes).written
    }

    /// Sends as much of `count` bytes of junk as the server takes before a send waits
    /// past the timeout (or `within` runs out); returns how many it took.
    public func flood(_ count: Int, within: Duration = .seconds(5)) -> Int {
        var sent = 0
        let deadline = ContinuousClock.now + within
        while sent < count && ContinuousClock.now < deadline {
            let taken = writeSome(Self.junk.prefix(count - sent))
            sent += taken
            if taken == 0 { break }
        }
        return sent
    }

    private static let junk = [UInt8](repeating: UInt8(ascii: "x"), count: 256 * 1024)

    // MARK: - Reading responses

    /// Reads one response. `bodyless` for the answer to a HEAD request.
    public func readResponse(bodyless: Bool = false) throws(RawHTTPError) -> RawHTTPResponse {
        let head = try readHead()
        return RawHTTPResponse(head: head, body: try readBody(of: head, bodyless: bodyless))
    }

    /// Reads the body that follows `head`, by its framing.
    func readBody(of head: RawHTTPHead, bodyless: Bool = false) throws(RawHTTPError) -> [UInt8] {
        let status = head.status
        if bodyless || status == 204 || status == 304 || (100..<200).contains(status) { return [] }
        if head.isChunked {
            let decoded = try fill { buffer throws(RawHTTPError) -> ChunkedBody.Decoded? in
                guard let decoded = ChunkedBody.decode(buffer) else { throw .malformed("chunk size in \(buffer.prefix(80))") }
                return decoded.isComplete ? decoded : nil
            }
            buffer.removeFirst(decoded.consumed)
            return decoded.body
        }
        if let lengthText = head.header("Content-Length") {
            guard let length = Int(lengthText), length >= 0 else { throw .malformed("Content-Length \(lengthText)") }
            _ = try fill { $0.count >= length ? length : nil }
            defer { buffer.removeFirst(length) }
            return Array(buffer[..<length])
        }
        // Neither: the body runs until the server closes.
        while (try? readMore()) != nil {}
        return takeBuffer()
    }

    /// Reads a status line and headers, up to and including the blank line.
    public func readHead() throws(RawHTTPError) -> RawHTTPHead {
        let headEnd = try fill { Self.find([13, 10, 13, 10], in: $0) }
        let text = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        return try RawHTTPHead(parsing: text)
    }

    // MARK: - Reading raw bytes

    /// True when the server closes this connection within `timeout` (EOF or reset) without
    /// sending anything more.
    public func closedByPeer(within timeout: Duration) -> Bool {
        let deadline = PatientDeadline(timeout)  // a frozen test process is given its time
        while deadline.hasTimeLeft {
            guard socket.isReadable(within: 50) else { continue }
            var byte: [UInt8] = []
            do {
                return try socket.read(into: &byte, maximum: 1) == 0
            } catch {
                return error.code == ECONNRESET
            }
        }
        return false
    }

    /// Reads until what arrived contains `marker` (or `timeout` passes, or the server
    /// closes); returns it all.
    public func read(until marker: String, timeout: Duration = .seconds(5)) -> [UInt8] {
        let wanted = Array(marker.utf8)
        var received = takeBuffer()
        let deadline = PatientDeadline(timeout)  // a frozen test process is given its time
        while deadline.hasTimeLeft && Self.find(wanted, in: received) == nil {
            guard socket.isReadable(within: 50) else { continue }
            guard (try? socket.read(into: &received)) ?? 0 > 0 else { break }
        }
        return received
    }

    /// Reads until the server closes the connection, for at most `timeout` and `limit`
    /// bytes; returns what arrived and whether the server closed it.
    public func readUntilClosed(timeout: Duration, limit: Int = 64 << 20) -> (bytes: [UInt8], closed: Bool) {
        var received = takeBuffer()
        let deadline = PatientDeadline(timeout)  // a frozen test process is given its time
        while deadline.hasTimeLeft && received.count < limit {
            guard socket.isReadable(within: 50) else { continue }
            do {
                if try socket.read(into: &received, maximum: 64 * 1024) == 0 { return (received, true) }
            } catch {
                if error.code == ECONNRESET { return (received, true) }
            }
        }
        return (received, false)
    }

    private func takeBuffer() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    // MARK: - Buffer

    /// Reads until `ready` finds what it looks for in the buffer, and returns its answer.
    func fill<T>(until ready: ([UInt8]) throws(RawHTTPError) -> T?) throws(RawHTTPError) -> T {
        while true {
            if let found = try ready(buffer) { return found }
            try readMore()
        }
    }

    /// Appends at least one byte to the buffer, or throws.
    func readMore() throws(RawHTTPError) {
        let count: Int
        do {
            count = try socket.read(into: &buffer)
        } catch {
            if error.isTimeout { throw .timedOut(afterBytes: buffer.count) }
            if error.code == ECONNRESET { throw .closed(afterBytes: buffer.count) }
            throw .system(error.description)
        }
        if count == 0 { throw .closed(afterBytes: buffer.count) }
    }

    /// Where `needle` (not empty) first starts in `haystack`.
    public static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        needle.isEmpty ? nil : haystack.firstRange(of: needle)?.lowerBound
    }
}
