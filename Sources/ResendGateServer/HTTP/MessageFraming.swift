#if canImport(Glibc)
import Glibc
#endif

/// Refuses requests whose body length another HTTP parser (a proxy in front of the
/// gate) could read differently from evhttp: request smuggling. A refused request
/// is answered 400 with `Connection: close`, so that nothing after it on the same
/// connection is read as a request of its own.
///
/// What evhttp 2.1 itself lets through, and what each rule stops:
/// - a header name that is not a token (`Transfer-Encoding : chunked`): evhttp
///   keeps it as another header, and a lenient proxy reads it as chunking;
/// - a `Transfer-Encoding` other than exactly `chunked` (`xchunked`,
///   `identity, chunked`): evhttp reads no body, so the body would be parsed as the
///   next request;
/// - a `Content-Length` that is not only digits (`+27`): evhttp takes it;
/// - a body length given twice, or both a length and chunking;
/// - a body on a method evhttp reads without one (HEAD, TRACE, unknown methods):
///   that body, too, would be parsed as the next request;
/// - `Host` given twice: the DNS-rebinding check (`BrowserGuard`) reads the first.
enum MessageFraming {
    static func problem(_ request: HTTPRequest) -> APIError? {
        var lengths = 0
        var encodings = 0
        var hosts = 0
        var nonZeroLength = false
        var problem: APIError?
        request.forEachHeader { name, value in
            guard isToken(name) else {
                problem = APIError.badRequest("a header name is not a token (no spaces, controls or separators)")
                return false
            }
            if strcasecmp(name, "Content-Length") == 0 {
                lengths += 1
                guard let digits = allDigits(value) else {
                    problem = APIError.badRequest("Content-Length must be decimal digits only")
                    return false
                }
                nonZeroLength = nonZeroLength || digits
            } else if strcasecmp(name, "Host") == 0 {
                hosts += 1
            } else if strcasecmp(name, "Transfer-Encoding") == 0 {
                encodings += 1
                guard strcasecmp(value, "chunked") == 0 else {
                    problem = APIError.badRequest("the only transfer coding accepted is chunked")
                    return false
                }
            }
            return true
        }
        if let problem { return problem }
        // RFC 9112 §3.2: two Host headers are refused; the gate reads only the first.
        if hosts > 1 { return APIError.badRequest("the request names its Host more than once") }
        if lengths > 1 || encodings > 1 || (lengths > 0 && encodings > 0) {
            return APIError.badRequest("ambiguous message framing: send one Content-Length or chunked encoding, not both")
        }
        if readsWithoutBody(request.method) && (encodings > 0 || nonZeroLength) {
            return APIError.badRequest("a \(request.method.rawValue) request has no body")
        }
        return nil
    }

    /// The methods for which evhttp 2.1 reads no body whatever the headers say.
    private static func readsWithoutBody(_ method: HTTPRequest.Method) -> Bool {
        method == .head || method == .trace || method == .other
    }

    /// Nil when `text` is empty or has anything but ASCII digits; else whether it is
    /// non-zero.
    private static func allDigits(_ text: UnsafePointer<CChar>) -> Bool? {
        var pointer = text
        var nonZero = false
        guard pointer.pointee != 0 else { return nil }
        while pointer.pointee != 0 {
            let byte = UInt8(bitPattern: pointer.pointee)
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            nonZero = nonZero || byte != UInt8(ascii: "0")
            pointer += 1
        }
        return nonZero
    }

    /// RFC 9110 `token`: what a header name may be made of.
    static func isToken(_ text: UnsafePointer<CChar>) -> Bool {
        var pointer = text
        guard pointer.pointee != 0 else { return false }
        while pointer.pointee != 0 {
            let byte = UInt8(bitPattern: pointer.pointee)
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                 UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                break
            default:
                return false
            }
            pointer += 1
        }
        return true
    }
}
