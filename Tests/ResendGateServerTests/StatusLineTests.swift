import Foundation
import ResendGate
@testable import ResendGateServer
import Testing

/// Every status the server can answer goes out with its RFC 9110 reason phrase (a 409
/// went out as `409 Status`). The statuses are gathered where they are made, so a new one
/// is checked without being listed here: every status APIError.swift gives (its switches over kinds and reasons
/// and its HTTP-only codes, read from the source, and every error `APIErrorTests` lists),
/// every `status: NNN` a route or the worker passes, and every status the framing refuses
/// with (`refuse(…, NNN`) in Sources/CHTTPConnection.
@Suite struct StatusLineTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// RFC 9110 §15's reason phrases.
    static let phrases: [Int: String] = [
        100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 304: "Not Modified",
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 421: "Misdirected Request", 422: "Unprocessable Content",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]

    /// The statuses written as `pattern`'s first group in the files under `folder` ending in `suffix`.
    static func statuses(in folder: String, _ suffix: String, _ pattern: String) throws -> Set<Int> {
        let regex = try NSRegularExpression(pattern: pattern)
        let base = root.appendingPathComponent(folder)
        let files = try #require(FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil))
        var found: Set<Int> = []
        for case let file as URL in files where file.lastPathComponent.hasSuffix(suffix) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text), let status = Int(text[range]) { found.insert(status) }
            }
        }
        return found
    }

    @Test func everyStatusTheServerCanAnswerHasItsReasonPhrase() throws {
        let errors = Set((APIErrorTests.gateErrors.map(APIError.init) + APIErrorTests.httpErrors).map(\.status))
            .union(try Self.statuses(in: "Sources/ResendGateServer", "APIError.swift", #"(?m)^ *case [^:\n]+: (\d{3})$"#))
            .union(try Self.statuses(in: "Sources/ResendGateServer", "APIError.swift", #"APIError\("[a-z_]+", (\d{3})\b"#))
        let routes = try Self.statuses(in: "Sources/ResendGateServer", ".swift", #"status: (?:[^,\n]*\? )?(\d{3})\b"#)
            .union(try Self.statuses(in: "Sources/ResendGateServer", ".swift", #"status: [^,\n]* : (\d{3})\b"#))
        let framing = try Self.statuses(in: "Sources/CHTTPConnection", ".c", #"refuse\((?:c|error), (\d{3})\b"#)
        // What the gathering must find, so that a broken pattern cannot pass by finding nothing.
        #expect(errors.isSuperset(of: [400, 401, 403, 404, 405, 409, 413, 415, 421, 422, 429, 431, 503]))
        #expect(routes.isSuperset(of: [200, 204]), "\(routes.sorted())")
        #expect(framing == [400, 413, 431], "\(framing.sorted())")
        for status in (errors.union(routes).union(framing)).sorted() {
            let phrase = "\(HTTPResponder.reason(status))"
            #expect(phrase == Self.phrases[status], "\(status) goes out as \"\(status) \(phrase)\"")
        }
    }

    /// A status without a phrase in the table gets an empty one (`HTTP/1.1 599 `), which
    /// RFC 9112 §4 allows, rather than a made-up word.
    @Test func anUnknownStatusGetsNoPhrase() {
        #expect("\(HTTPResponder.reason(599))" == "")
    }
}
