import Foundation
import ResendGateTestSupport
import Testing

/// Every error answer of the HTTP API: its status, its stable code, and a JSON body
/// `{"error": {"code", "message"}}` and nothing else.
@Suite("Error answers", .ownThread)
struct ErrorResponseTests {
    struct BadBody: CustomTestStringConvertible, Sendable {
        let body: String
        let code: String
        var testDescription: String { "\(code): \(body)" }
    }

    static let badBodies: [BadBody] = [
        BadBody(body: "", code: "invalid_json"),
        BadBody(body: "not json", code: "invalid_json"),
        BadBody(body: #"{"phone": "+8613800138000""#, code: "invalid_json"),
        BadBody(body: #"["+8613800138000"]"#, code: "invalid_json"),
        BadBody(body: #""+8613800138000""#, code: "invalid_json"),
        BadBody(body: #"{"phone": "+8613800138000", "phone": "+8613800138001"}"#, code: "invalid_json"),
        BadBody(body: #"{"phone": "+8613800138000"} trailing"#, code: "invalid_json"),
        BadBody(body: #"{"phone": "12"}"#, code: "invalid_phone"),
        BadBody(body: #"{"phone": "call me"}"#, code: "invalid_phone"),
        BadBody(body: #"{"phone": ""}"#, code: "invalid_phone"),
        BadBody(body: #"{"phone": "+86 138 0013 800"}"#, code: "invalid_phone"),
        BadBody(body: #"{"phone": "+8613800138000", "purpose": "Login"}"#, code: "invalid_purpose"),
        BadBody(body: #"{"phone": "+8613800138000", "purpose": ""}"#, code: "invalid_purpose"),
        BadBody(body: #"{"phone": "+8613800138000", "purpose": "a-purpose-name-longer-than-32-chars"}"#, code: "invalid_purpose"),
        BadBody(body: #"{}"#, code: "missing_field"),
        BadBody(body: #"{"purpose": "login"}"#, code: "missing_field"),
        BadBody(body: #"{"phone": null}"#, code: "missing_field"),
        BadBody(body: #"{"phone": 8613800138000}"#, code: "invalid_field"),
        BadBody(body: #"{"phone": ["+8613800138000"]}"#, code: "invalid_field"),
        BadBody(body: #"{"phone": "+8613800138000", "purpose": 7}"#, code: "invalid_field"),
        BadBody(body: #"{"phone": "+8613800138000", "client_ip": "not-an-ip"}"#, code: "invalid_field"),
        BadBody(body: #"{"phone": "+8613800138000", "client_ip": "203.0.113.256"}"#, code: "invalid_field"),
    ]

    @Test func everyBadBodyGets400WithItsCode() throws {
        try withRunningGate { gate in
            for bad in Self.badBodies {
                let response = try gate.client().send(bad.body)
                #expect(response.statusLine == "HTTP/1.1 400 Bad Request", "\(bad.testDescription)")
                try Self.expectError(response, code: bad.code, bad.testDescription)
            }
            // None of them reserved anything.
            #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        }
    }

    @Test func unknownPathsGet404() throws {
        try withRunningGate { gate in
            for (method, target) in [("GET", "/nothing"), ("POST", "/v1/send"), ("GET", "/v1/sends/extra"), ("GET", "/v2/sends"),
                                     ("GET", "/healthz/extra"), ("DELETE", "/v1")] {
                let response = try gate.client().request(method, target)
                #expect(response.statusLine == "HTTP/1.1 404 Not Found", "\(method) \(target)")
                try Self.expectError(response, code: "not_found", "\(method) \(target)")
            }
        }
    }

    @Test func wrongMethodsGet405WithAllow() throws {
        try withRunningGate { gate in
            let cases: [(String, String, String)] = [
                ("GET", "/v1/sends", "POST"),
                ("PUT", "/v1/sends", "POST"),
                ("DELETE", "/v1/sends", "POST"),
                ("POST", "/v1/cooldowns/%2B8613800138000", "GET, HEAD, DELETE"),
                ("PATCH", "/v1/cooldowns/%2B8613800138000", "GET, HEAD, DELETE"),
                ("POST", "/healthz", "GET, HEAD"),
                ("DELETE", "/metrics", "GET, HEAD"),
                ("POST", "/", "GET, HEAD"),
                ("PUT", "/openapi.yaml", "GET, HEAD"),
            ]
            for (method, target, allow) in cases {
                let response = try gate.client().request(method, target, body: method == "GET" || method == "DELETE" ? nil : [])
                #expect(response.statusLine == "HTTP/1.1 405 Method Not Allowed", "\(method) \(target)")
                #expect(response.headers(named: "Allow") == [allow], "\(method) \(target)")
                try Self.expectError(response, code: "method_not_allowed", "\(method) \(target)")
            }
        }
    }

    @Test func aBodyOf20KiBGets413() throws {
        try withRunningGate { gate in
            let padding = String(repeating: "x", count: 20 * 1024)
            let response = try gate.client().send(#"{"phone": "+8613800138000", "pad": "\#(padding)"}"#)
            #expect(response.statusLine == "HTTP/1.1 413 Content Too Large")
            try Self.expectError(response, code: "body_too_large", "20 KiB")
            #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        }
    }

    /// A body far above the limit (100 KiB) is not read on: the framing answers the same
    /// JSON 413 as any other and closes, as docs/API.md says ("Answers that end the
    /// connection"), and nothing was reserved.
    @Test func aBodyFarAboveTheLimitGetsTheSameJSON413() throws {
        try withRunningGate { gate in
            let padding = String(repeating: "x", count: 100 * 1024)
            let response = try gate.client().send(#"{"phone": "+8613800138000", "pad": "\#(padding)"}"#)
            #expect(response.status == 413, "\(response)")
            try Self.expectError(response, code: "body_too_large", "100 KiB")
            #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        }
    }

    @Test func headersOver8KiBGet431() throws {
        try withRunningGate { gate in
            let big = String(repeating: "h", count: 9 * 1024)
            let response = try gate.client().request("GET", "/healthz", headers: [("X-Padding", big)])
            #expect(response.statusLine == "HTTP/1.1 431 Request Header Fields Too Large", "\(response)")
            try Self.expectError(response, code: "header_too_large", "9 KiB header")
        }
    }

    @Test func aNonJSONContentTypeGets415() throws {
        try withRunningGate { gate in
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
                let response = try gate.client().send(#"{"phone": "+8613800138000"}"#, headers: [("Content-Type", type)])
                #expect(response.statusLine == "HTTP/1.1 415 Unsupported Media Type", "\(type)")
                try Self.expectError(response, code: "unsupported_media_type", type)
            }
            // No Content-Type at all (a page's no-cors Blob) is refused the same way.
            let untyped = try gate.client().send(#"{"phone": "+8613800138000"}"#, headers: [])
            #expect(untyped.statusLine == "HTTP/1.1 415 Unsupported Media Type")
            try Self.expectError(untyped, code: "unsupported_media_type", "no Content-Type")
            #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        }
    }

    /// A request with both Content-Length and Transfer-Encoding could be framed two
    /// ways by two parsers (request smuggling): it is refused and the connection closed.
    @Test func ambiguousFramingIsRefusedAndTheConnectionClosed() throws {
        try withRunningGate { gate in
            let json = #"{"phone": "+8613800138000"}"#
            let chunked = String(json.utf8.count, radix: 16) + "\r\n" + json + "\r\n0\r\n\r\n"
            let requests = [
                "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(chunked.utf8.count)\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
                "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: \(chunked.utf8.count)\r\n\r\n" + chunked,
                "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\nContent-Length: \(json.utf8.count)\r\n\r\n" + json,
            ]
            for request in requests {
                let connection = try RawHTTPConnection(port: gate.port)
                try connection.write(request)
                let response = try connection.readResponse()
                #expect(response.status == 400, "\(request)\n->\n\(response)")
                #expect(connection.closedByPeer(within: .seconds(2)), "\(request)")
            }
            // Nothing was reserved by any of them.
            #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        }
    }

    static func expectError(
        _ response: RawHTTPResponse, code: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.header("Content-Type") == jsonContentType, "\(context)", sourceLocation: sourceLocation)
        #expect(try response.jsonKeys() == ["error"], "\(context): \(response.text)", sourceLocation: sourceLocation)
        let error = try response.decode(ErrorBody.self).error
        #expect(error.code == code, "\(context): \(error.message)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        let detail = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: [String: Any]]
        #expect(Set(detail?["error"]?.keys ?? [:].keys) == ["code", "message"], sourceLocation: sourceLocation)
    }
}
