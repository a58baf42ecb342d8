import CLibevent
import CHTTPConnection

/// Writes and sends responses through evhttp; confined to the worker's loop.
struct HTTPResponder {
    let request: HTTPRequest
    /// The connection timeout, off while the request was served: an answer puts it back.
    let connectionTimeout: timeval

    /// Adds a response header.
    func header(_ name: String, _ value: String) {
        // withCString: short strings stay on the stack (passing a String copies it).
        name.withCString { name in
            value.withCString { value in
                _ = evhttp_add_header(evhttp_request_get_output_headers(request.raw), name, value)
            }
        }
    }

    /// Sends `status` with `body` (copied into libevent's buffer) and ends the request.
    /// A HEAD request gets the headers only. False when the socket could not take the
    /// whole answer at once and libevent writes the rest as the client reads.
    @discardableResult
    func send(status: Int, body: [UInt8], contentType: String = "application/json; charset=utf-8") -> Bool {
        header("Content-Type", contentType)
        if !body.isEmpty {
            let output = evhttp_request_get_output_buffer(request.raw)
            _ = body.withUnsafeBytes { evbuffer_add(output, $0.baseAddress, $0.count) }
        }
        return sendReply(status)
    }

    /// Sends a status with no body (204); the same answer as `send`.
    @discardableResult
    func sendEmpty(status: Int) -> Bool {
        sendReply(status)
    }

    /// Starts a streamed answer (chunks follow with evhttp_send_reply_chunk).
    func startStream(status: Int) {
        var timeout = connectionTimeout
        withReason(status) { rg_http_start_stream(request.raw, Int32(status), $0, &timeout) }
    }

    private func sendReply(_ status: Int) -> Bool {
        var timeout = connectionTimeout
        return withReason(status) { rg_http_send_reply(request.raw, Int32(status), $0, &timeout) } == 1
    }

    private func withReason<T>(_ status: Int, _ body: (UnsafePointer<CChar>) -> T) -> T {
        // A string literal: its UTF-8 ends with a NUL, as evhttp's C string wants.
        let reason = HTTPStatus.reason(status)
        return reason.utf8Start.withMemoryRebound(to: CChar.self, capacity: reason.utf8CodeUnitCount + 1) { body($0) }
    }
}

enum HTTPStatus {
    static func reason(_ status: Int) -> StaticString {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
