import CHTTPConnection
@testable import ResendGateServer
import Testing

/// `HTTPRequest.method` indexes `Method`'s cases by the framing's `rg_http_method`: the two
/// must list the methods in one order, which this holds, each method parsed by the framing.
@Suite struct RequestMethodTests {
    @Test(arguments: HTTPRequest.Method.allCases)
    func theFramingsMethodIsTheSameCase(method: HTTPRequest.Method) {
        let name = method == .other ? "BREW" : method.rawValue
        var bytes = Array("\(name) /x HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        var request = rg_http_request()
        let headers = UnsafeMutablePointer<rg_http_header>.allocate(capacity: Int(RG_HTTP_MAX_HEADERS))
        defer { headers.deallocate() }
        var consumed = 0
        let result = rg_http_parse_whole(&bytes, bytes.count, 8 << 10, 16 << 10, &request, headers, &consumed)
        #expect(result == 1, "\(name) was refused")
        withUnsafePointer(to: &request) { parsed in
            #expect(HTTPRequest(connection: OpaquePointer(bitPattern: 1)!, parsed: parsed).method == method)
        }
    }
}
