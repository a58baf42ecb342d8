import CHTTPConnection

/// The header lines of an answer, in a buffer a worker reuses.
struct ResponseHeaders {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Adds `name: value`. A value with a CR or LF is left out: it would end the header
    /// early (response splitting).
    mutating func add(_ name: String, _ value: String) {
        guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 }) else { return }
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: ": ".utf8)
        bytes.append(contentsOf: value.utf8)
        bytes.append(contentsOf: "\r\n".utf8)
    }
}

/// Sends answers on the server's connections; confined to the worker's loop.
enum HTTPResponder {
    /// Sends the answer (its head alone to a HEAD; no body nor `Content-Type` with a 204) and
    /// ends the request: the connection is the caller's no more. True when the socket did not
    /// take it whole (the rest is written as the client reads).
    static func send(_ request: HTTPRequest, status: Int, headers: ResponseHeaders, body: [UInt8], contentType: String) -> Bool {
        let result = headers.bytes.withUnsafeBufferPointer { extra in
            body.withUnsafeBufferPointer { body in
                rg_http_respond(request.connection, Int32(status), reason(status), extra.baseAddress, extra.count, contentType,
                                body.baseAddress, body.count, request.method == .head ? 1 : 0, 0)
            }
        }
        return result == 0  // 1: written whole, -1: gone
    }

    /// Starts a streamed answer; false when the client had gone (the connection is released).
    static func startStream(_ connection: OpaquePointer, status: Int, headers: ResponseHeaders, contentType: String) -> Bool {
        headers.bytes.withUnsafeBufferPointer { extra in
            rg_http_start_stream(connection, Int32(status), reason(status), extra.baseAddress, extra.count, contentType) == 1
        }
    }

    /// RFC 9110 §15's reason phrase of each status the server answers (`StatusLineTests`
    /// holds every status given to it); none for another, which RFC 9112 §4 allows.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: ""
        }
    }
}
