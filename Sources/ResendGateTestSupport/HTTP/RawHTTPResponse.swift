import Foundation

/// Why a raw HTTP exchange failed.
public enum RawHTTPError: Error, Equatable, CustomStringConvertible {
    /// `connect()` was refused: nothing listens on the port.
    case refused
    /// The server closed the connection (or reset it) before a whole response arrived.
    case closed(afterBytes: Int)
    /// No (whole) response within the read deadline.
    case timedOut(afterBytes: Int)
    case malformed(String)
    case system(String)

    public var description: String {
        switch self {
        case .refused: "connection refused"
        case .closed(let count): "connection closed after \(count) response bytes"
        case .timedOut(let count): "timed out after \(count) response bytes"
        case .malformed(let why): "malformed response: \(why)"
        case .system(let what): what
        }
    }
}

/// The status line and headers of one HTTP/1.1 response.
public struct RawHTTPHead: Sendable {
    public let statusLine: String
    public let status: Int
    /// In the order received, names as sent.
    public let headers: [(name: String, value: String)]

    /// Parses the text before the blank line (`\r\n`-separated).
    init(parsing text: String) throws(RawHTTPError) {
        var lines = text.components(separatedBy: "\r\n")
        statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw .malformed("status line \(statusLine)")
        }
        self.status = status
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        self.headers = headers
    }

    /// The first value of a header, matched without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether the body is chunked (`Transfer-Encoding` names `chunked`).
    public var isChunked: Bool { header("Transfer-Encoding")?.lowercased().contains("chunked") == true }
}

/// One HTTP/1.1 response, read byte for byte off the socket.
public struct RawHTTPResponse: CustomStringConvertible, Sendable {
    public let head: RawHTTPHead
    public let body: [UInt8]

    public init(head: RawHTTPHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    public var statusLine: String { head.statusLine }
    public var status: Int { head.status }
    /// In the order received, names as sent.
    public var headers: [(name: String, value: String)] { head.headers }

    /// The first value of a header, matched without case.
    public func header(_ name: String) -> String? { head.header(name) }

    /// Every value of a header, matched without case.
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object; throws when it is not one.
    public func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw RawHTTPError.malformed("body is not a JSON object: \(text)")
        }
        return object
    }

    public var description: String {
        "\(statusLine)\n" + headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n") + "\n\n" + text.prefix(2000)
    }
}
