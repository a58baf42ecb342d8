import CHTTPConnection

/// One request as the server's framing parsed it: a view of its connection's buffer,
/// valid until the answer is sent; confined to the worker's loop.
struct HTTPRequest {
    enum Method: String, CaseIterable {
        case get = "GET", post = "POST", delete = "DELETE", head = "HEAD", put = "PUT"
        case options = "OPTIONS", patch = "PATCH", trace = "TRACE", connect = "CONNECT", other = "OTHER"
    }

    let connection: OpaquePointer
    let parsed: UnsafePointer<rg_http_request>

    /// The framing's `rg_http_method`, whose values number the cases of `Method` in their order.
    var method: Method {
        Self.methods[min(Int(parsed.pointee.method.rawValue), Self.methods.count - 1)]
    }

    private static let methods = Method.allCases

    /// The path, still percent-encoded, and the query (without `?`).
    var target: (path: Substring, query: Substring?) {
        let request = parsed.pointee
        let bytes = UnsafeBufferPointer(start: request.head + Int(request.target_offset), count: Int(request.target_length))
        let uri = String(decoding: bytes, as: UTF8.self)
        guard let mark = uri.firstIndex(of: "?") else { return (uri[...], nil) }
        return (uri[..<mark], uri[uri.index(after: mark)...])
    }

    /// A request header's value (the first one, matched without case).
    func header(_ name: String) -> String? {
        withHeader(name) { String(decoding: $0, as: UTF8.self) }
    }

    /// `body` of a header's value as received (no String made); nil without that header.
    func withHeader<T>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        let request = parsed.pointee
        guard let headers = request.headers else { return nil }
        var name = name
        return name.withUTF8 { wanted -> T? in
            for index in 0..<request.header_count {
                let field = headers[index]
                let received = UnsafeBufferPointer(start: request.head + Int(field.name), count: Int(field.name_length))
                guard received.equalsIgnoringASCIICase(wanted) else { continue }
                return body(UnsafeBufferPointer(start: request.head + Int(field.value), count: Int(field.value_length)))
            }
            return nil
        }
    }

    /// Copies the body into `buffer` (reused between requests).
    func readBody(into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        let request = parsed.pointee
        guard let body = request.body, request.body_length > 0 else { return }
        buffer.append(contentsOf: UnsafeBufferPointer(start: body, count: Int(request.body_length)))
    }
}

extension Collection<UInt8> {
    /// Whether these bytes equal `other`'s, ASCII letters compared without case.
    func equalsIgnoringASCIICase(_ other: some Collection<UInt8>) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
    }
}

extension UInt8 {
    /// An ASCII upper-case letter in lower case; any other byte as it is.
    fileprivate var asciiLowercased: UInt8 { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) ? self | 0x20 : self }
}
