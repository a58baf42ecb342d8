import CLibevent
#if canImport(Glibc)
import Glibc
#endif

/// One request as evhttp parsed it. A view over libevent's request, valid until
/// the response is sent; confined to the worker's loop.
struct HTTPRequest {
    enum Method: String {
        case get = "GET", post = "POST", delete = "DELETE", head = "HEAD", put = "PUT"
        case options = "OPTIONS", patch = "PATCH", trace = "TRACE", connect = "CONNECT", other = "OTHER"
    }

    let raw: UnsafeMutablePointer<evhttp_request>

    var method: Method {
        switch evhttp_request_get_command(raw) {
        case EVHTTP_REQ_GET: .get
        case EVHTTP_REQ_POST: .post
        case EVHTTP_REQ_DELETE: .delete
        case EVHTTP_REQ_HEAD: .head
        case EVHTTP_REQ_PUT: .put
        case EVHTTP_REQ_OPTIONS: .options
        case EVHTTP_REQ_PATCH: .patch
        case EVHTTP_REQ_TRACE: .trace
        case EVHTTP_REQ_CONNECT: .connect
        default: .other
        }
    }

    /// The path, still percent-encoded, and the query (without `?`).
    var target: (path: Substring, query: Substring?) {
        let uri = String(cString: evhttp_request_get_uri(raw))
        if let mark = uri.firstIndex(of: "?") {
            return (uri[..<mark], uri[uri.index(after: mark)...])
        }
        return (uri[...], nil)
    }

    /// A request header's value (the first one, matched without case).
    func header(_ name: String) -> String? {
        find(name).map { String(cString: $0) }
    }

    /// Calls `body` with a header's value as libevent holds it (no String made), or
    /// returns nil when the request has no such header.
    func withHeader<T>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        guard let value = find(name) else { return nil }
        let count = strlen(value)
        return value.withMemoryRebound(to: UInt8.self, capacity: count + 1) { body(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// Whether the request has this header, without copying its value.
    func hasHeader(_ name: String) -> Bool {
        find(name) != nil
    }

    /// The first value of `name` as libevent stores it. withCString: a short name stays
    /// on the stack, where passing the String itself copied it into a new array per call.
    private func find(_ name: String) -> UnsafePointer<CChar>? {
        name.withCString { evhttp_find_header(evhttp_request_get_input_headers(raw), $0) }
    }

    /// Calls `body` with each header's name and value as evhttp stored them (C
    /// strings, in the order received) until it returns false.
    func forEachHeader(_ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Bool) {
        var entry = evhttp_request_get_input_headers(raw).pointee.tqh_first
        while let current = entry {
            guard let key = current.pointee.key, let value = current.pointee.value else { return }
            if !body(key, value) { return }
            entry = current.pointee.next.tqe_next
        }
    }

    /// The size of the request line and headers, as evhttp counted them.
    var headerBytes: Int { raw.pointee.headers_size }

    /// The body length in bytes.
    var bodyLength: Int { evbuffer_get_length(evhttp_request_get_input_buffer(raw)) }

    /// Copies the body into `buffer` (reused between requests).
    func readBody(into buffer: inout [UInt8]) {
        let input = evhttp_request_get_input_buffer(raw)
        let length = evbuffer_get_length(input)
        buffer.removeAll(keepingCapacity: true)
        guard length > 0 else { return }
        buffer.append(contentsOf: repeatElement(0, count: length))
        _ = buffer.withUnsafeMutableBytes { evbuffer_copyout(input, $0.baseAddress, length) }
    }
}
