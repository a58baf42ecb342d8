import Foundation
import ResendGate
import ResendGateServer
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile HTTP input, sent as raw bytes over real sockets: each request gets a 4xx
/// or a closed connection, never a 5xx (other than 503), never a crash or a hang,
/// never a reservation it should not make; and after each, the server still answers
/// `/healthz` within 500 ms and a valid send still works.
@Suite("Hostile HTTP input", .serialized, .ownThread)
struct HostileInputTests {
    // MARK: - Request lines

    @Test func malformedRequestLinesGet400() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            let cases: [(String, [UInt8], Set<Int>)] = [
                ("garbage", Array("GARBAGE\r\n\r\n".utf8), [400]),
                ("binary", [0, 1, 2, 0x20, 0xFF, 0xFE, 0x0D, 0x0A, 0x0D, 0x0A], [400]),
                ("missing version", Array("GET /healthz\r\n\r\n".utf8), [400]),
                ("HTTP/9.9", Array("GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n".utf8), [400]),
                ("HTTP/2.0", Array("GET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n".utf8), [400]),
                ("lower-case version", Array("GET /healthz http/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), [400]),
                ("extra token", Array("GET /healthz HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n".utf8), [400]),
                ("NUL in target", Array("GET /healthz\0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), [400]),
                ("header without colon", Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon\r\n\r\n".utf8), [400]),
                ("bare CR in a header", Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\rb\r\n\r\n".utf8), [400]),
                ("absolute-form, other host", Array("GET http://evil.example/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), [404]),
                ("unknown method", Array("FOO /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), [405]),
                ("unknown method, unknown path", Array("FOO /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), [404]),
            ]
            for (name, bytes, statuses) in cases {
                try Self.expectRefused(gate, bytes, statuses, name)
                try Self.expectStillServing(gate, phones, name)
            }

            // Absolute-form naming another host reserves nothing, even for a valid body.
            let phone = phones.next()
            let body = #"{"phone": "\#(phone)"}"#
            // With a loopback Host the target is no route (404); naming the other host in
            // Host too, it is misdirected (421: a keyless gate answers loopback names only).
            for (host, status) in [("127.0.0.1", 404), ("evil.example", 421)] {
                try Self.expectRefused(gate, Array(("POST http://evil.example/v1/sends HTTP/1.1\r\nHost: \(host)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body).utf8), [status],
                    "absolute-form POST, Host \(host)")
                try Self.expectNotReserved(gate, phone, "absolute-form POST, Host \(host)")
                try Self.expectStillServing(gate, phones, "absolute-form POST, Host \(host)")
            }

            // Bare LF line endings: RFC 9112 §2.2 lets a recipient accept them, and
            // evhttp does; the request is answered normally, never with a 5xx.
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            try connection.write("GET /healthz HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n")
            let response = try connection.readResponse()
            #expect(response.status == 200, "bare LF: \(response)")
            try Self.expectStillServing(gate, phones, "bare LF")
        }
    }

    // MARK: - Sizes

    @Test func oversizedHeadersAndBodiesAreRefused() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            let post = "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            let megabyte = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
            var chunkedMegabyte = Array((post + "Transfer-Encoding: chunked\r\n\r\n").utf8)
            for _ in 0..<16 { chunkedMegabyte += Array("10000\r\n".utf8) + megabyte[..<65536] + [13, 10] }
            chunkedMegabyte += Array("0\r\n\r\n".utf8)
            let cases: [(String, [UInt8], Set<Int>, Bool)] = [
                ("100 KiB header line",
                 Array(("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + String(repeating: "h", count: 100 * 1024) + "\r\n\r\n").utf8),
                 [400, 413, 431], true),
                ("9 KiB header", Array(("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + String(repeating: "h", count: 9 * 1024) + "\r\n\r\n").utf8),
                 [431], true),
                ("1 MiB body with Content-Length", Array((post + "Content-Length: \(megabyte.count)\r\n\r\n").utf8) + megabyte, [413], true),
                ("1 MiB chunked body", chunkedMegabyte, [413], true),
                // No length at all: the request has no body (RFC 9112 §6.3), so the
                // megabyte is read as a next request and refused in turn.
                ("1 MiB body without Content-Length", Array((post + "\r\n").utf8) + megabyte, [400], false),
                ("Content-Length past 2^64", Array((post + "Content-Length: 99999999999999999999999\r\n\r\n{}").utf8), [400, 413], true),
                ("20 KiB body", Array((post + "Content-Length: \(20 * 1024)\r\n\r\n").utf8) + megabyte[..<(20 * 1024)], [413], true),
            ]
            for (name, bytes, statuses, mustClose) in cases {
                try Self.expectRefused(gate, bytes, statuses, name, mustClose: mustClose)
                try Self.expectStillServing(gate, phones, name)
            }

            // A body announced at 1 MiB and cut short: the server gets end-of-file
            // and drops the request (a 4xx at most), without deciding anything.
            let phone = phones.next()
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            try connection.write(post + "Content-Length: \(1 << 20)\r\n\r\n{\"phone\": \"\(phone)\"}")
            connection.shutdownWrite()
            Self.expectRefusedOrClosed(connection, nil, "body cut short")
            try Self.expectNotReserved(gate, phone, "body cut short")
            try Self.expectStillServing(gate, phones, "body cut short")
        }
    }

    @Test func badChunkSizesAreRefused() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            // The last: an extension that never ends (a size line is rescanned as it grows:
            // past 1 KiB it is refused).
            for size in ["zz", "-1b", "FFFFFFFFFFFFFFFF", "10000000000000001b", "7FFFFFFFFFFFFFFF", "1b;" + String(repeating: "e", count: 2_000)] {
                let phone = phones.next()
                let json = #"{"phone": "\#(phone)"}"#
                let request = "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + size + "\r\n" + json + "\r\n0\r\n\r\n"
                try Self.expectRefused(gate, Array(request.utf8), [400, 413], "chunk size \(size)", mustClose: true)
                try Self.expectNotReserved(gate, phone, "chunk size \(size)")
                try Self.expectStillServing(gate, phones, "chunk size \(size)")
            }

            // The final chunk never comes and the client closes: nothing is decided.
            let phone = phones.next()
            let json = #"{"phone": "\#(phone)"}"#
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            try connection.write("POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(json.utf8.count, radix: 16) + "\r\n" + json + "\r\n")
            connection.shutdownWrite()
            Self.expectRefusedOrClosed(connection, nil, "missing final chunk")
            connection.close()
            try Self.expectNotReserved(gate, phone, "missing final chunk")
            try Self.expectStillServing(gate, phones, "missing final chunk")

            // A well-formed chunked request is served, and its connection then closed:
            // evhttp reads chunk sizes leniently, so nothing after one is trusted.
            let chunked = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            let valid = #"{"phone": "\#(phones.next())"}"#
            try chunked.write("POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(valid.utf8.count, radix: 16) + "\r\n" + valid + "\r\n0\r\n\r\n")
            let response = try chunked.readResponse()
            #expect(response.status == 200, "\(response)")
            #expect(response.header("Connection") == "close")
            #expect(chunked.closedByPeer(within: .seconds(2)))
        }
    }

    // MARK: - Smuggling

    /// Each request tries to hide a second `POST /v1/sends` behind framing that a
    /// proxy and evhttp could read two ways. Each must be refused with 400 and its
    /// connection closed, and neither the outer nor the hidden send may be reserved.
    @Test func requestSmugglingIsRefusedAndReservesNothing() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            struct Case {
                let name: String
                let bytes: (_ outer: String, _ hidden: String) -> String
            }
            func chunk(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n0\r\n\r\n" }
            let post = "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            let cases: [Case] = [
                Case(name: "Content-Length then chunked") { outer, hidden in
                    post + "Content-Length: \(chunk(outer).utf8.count)\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(outer) + hidden
                },
                Case(name: "chunked then Content-Length") { outer, hidden in
                    post + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n" + chunk(outer) + hidden
                },
                Case(name: "xchunked with Content-Length") { outer, hidden in
                    post + "Transfer-Encoding: xchunked\r\nContent-Length: \(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "xchunked alone") { _, hidden in post + "Transfer-Encoding: xchunked\r\n\r\n" + hidden },
                Case(name: "identity, chunked") { outer, hidden in
                    post + "Transfer-Encoding: identity, chunked\r\n\r\n" + chunk(outer) + hidden
                },
                Case(name: "chunked, identity") { outer, hidden in
                    post + "Transfer-Encoding: chunked, identity\r\n\r\n" + chunk(outer) + hidden
                },
                Case(name: "duplicate Transfer-Encoding") { outer, hidden in
                    post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(outer) + hidden
                },
                Case(name: "chunked then identity") { outer, hidden in
                    post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n" + chunk(outer) + hidden
                },
                Case(name: "space before the colon") { outer, hidden in
                    post + "Transfer-Encoding : chunked\r\nContent-Length: \(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "tab before the value, with Content-Length") { outer, hidden in
                    post + "Transfer-Encoding:\tchunked\r\nContent-Length: \(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "value with a trailing space") { outer, hidden in
                    post + "Transfer-Encoding: chunked \r\nContent-Length: \(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "obs-fold") { outer, hidden in
                    post + "Transfer-Encoding:\r\n chunked\r\nContent-Length: \(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "two different Content-Lengths") { outer, hidden in
                    post + "Content-Length: \(outer.utf8.count)\r\nContent-Length: \((outer + hidden).utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "Content-Length list") { outer, hidden in
                    post + "Content-Length: \(outer.utf8.count), \(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "signed Content-Length") { outer, hidden in
                    post + "Content-Length: +\(outer.utf8.count)\r\n\r\n" + outer + hidden
                },
                Case(name: "negative Content-Length") { outer, hidden in post + "Content-Length: -1\r\n\r\n" + outer + hidden },
                Case(name: "HEAD with a body") { _, hidden in
                    "HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(hidden.utf8.count)\r\n\r\n" + hidden
                },
                Case(name: "HEAD with a chunked body") { _, hidden in
                    "HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(hidden)
                },
                Case(name: "TRACE with a body") { _, hidden in
                    "TRACE /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(hidden.utf8.count)\r\n\r\n" + hidden
                },
                Case(name: "unknown method with a body") { _, hidden in
                    "FOO /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(hidden.utf8.count)\r\n\r\n" + hidden
                },
            ]
            for smuggling in cases {
                let outerPhone = phones.next()
                let hiddenPhone = phones.next()
                let outer = #"{"phone": "\#(outerPhone)"}"#
                let hiddenJSON = #"{"phone": "\#(hiddenPhone)"}"#
                let hidden = post + "Content-Length: \(hiddenJSON.utf8.count)\r\n\r\n" + hiddenJSON
                try Self.expectRefused(gate, Array(smuggling.bytes(outer, hidden).utf8), [400], smuggling.name, mustClose: true)
                try Self.expectNotReserved(gate, outerPhone, smuggling.name)
                try Self.expectNotReserved(gate, hiddenPhone, smuggling.name)
                try Self.expectStillServing(gate, phones, smuggling.name)
            }

            // An obs-fold line (" Transfer-Encoding: chunked" after another header): a proxy
            // that strips the space reads a Transfer-Encoding there, one that unfolds reads
            // none. RFC 9112 §5.2 lets a server refuse it (it did unfold it until the gate's
            // own framing): refused, and nothing reserved.
            let folded = phones.next()
            let foldedJSON = #"{"phone": "\#(folded)"}"#
            let foldedResponse = try gate.client().request("POST", "/v1/sends", headers: [
                ("Content-Type", "application/json"), ("X-A", "b\r\n Transfer-Encoding: chunked"),
            ], body: Array(foldedJSON.utf8))
            #expect(foldedResponse.status == 400 && foldedResponse.errorCode == "bad_request", "\(foldedResponse)")
            try Self.expectNotReserved(gate, folded, "obs-fold")

            // A GET's body is read (evhttp reads one on GET) and never run as a request.
            let hiddenPhone = phones.next()
            let hiddenJSON = #"{"phone": "\#(hiddenPhone)"}"#
            let hidden = post + "Content-Length: \(hiddenJSON.utf8.count)\r\n\r\n" + hiddenJSON
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
            try connection.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(hidden.utf8.count)\r\n\r\n" + hidden)
            #expect(try connection.readResponse().status == 200)
            connection.close()
            try Self.expectNotReserved(gate, hiddenPhone, "GET with a body")
        }
    }

    // MARK: - Control characters and invalid UTF-8

    @Test func controlCharactersAndInvalidUTF8InFieldsAreRefused() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            let valid = "+8613800138000"
            // (name, body bytes, expected codes)
            let bodies: [(String, [UInt8], Set<String>)] = [
                ("phone with \\u0000", Array(#"{"phone": "+86138\u000000138000"}"#.utf8), ["invalid_phone"]),
                ("phone ending in \\u0000", Array(#"{"phone": "\#(valid)\u0000junk"}"#.utf8), ["invalid_phone"]),
                ("phone with a raw NUL", Array(#"{"phone": "+86138"#.utf8) + [0] + Array(#"00138000"}"#.utf8), ["invalid_json"]),
                ("phone with \\r\\n", Array(#"{"phone": "\#(valid)\r\nX-Injected: 1"}"#.utf8), ["invalid_phone"]),
                ("phone with raw CR LF", Array("{\"phone\": \"\(valid)\r\nX-Injected: 1\"}".utf8), ["invalid_json"]),
                ("phone with 0xFF", Array(#"{"phone": "+86138"#.utf8) + [0xFF] + Array(#"00138000"}"#.utf8), ["invalid_json"]),
                ("phone with an overlong '/'", Array(#"{"phone": "+86138"#.utf8) + [0xC0, 0xAF] + Array(#"00138000"}"#.utf8), ["invalid_json"]),
                ("phone with a raw surrogate", Array(#"{"phone": "+86138"#.utf8) + [0xED, 0xA0, 0x80] + Array(#"00138000"}"#.utf8), ["invalid_json"]),
                ("phone with a lone \\ud800", Array(#"{"phone": "+86138\ud80000138000"}"#.utf8), ["invalid_json"]),
                ("purpose with \\u0000", Array(#"{"phone": "\#(valid)", "purpose": "login\u0000"}"#.utf8), ["invalid_purpose"]),
                ("purpose with \\r\\n", Array(#"{"phone": "\#(valid)", "purpose": "login\r\nX-Injected: 1"}"#.utf8), ["invalid_purpose"]),
                ("purpose with raw LF", Array("{\"phone\": \"\(valid)\", \"purpose\": \"lo\ngin\"}".utf8), ["invalid_json"]),
                ("purpose with 0xFF", Array(#"{"phone": "\#(valid)", "purpose": "lo"#.utf8) + [0xFF] + Array(#"gin"}"#.utf8), ["invalid_json"]),
                ("purpose with U+212A (Kelvin K)", Array(#"{"phone": "\#(valid)", "purpose": "\u212Aey"}"#.utf8), ["invalid_purpose"]),
                ("client_ip ending in \\u0000", Array(#"{"phone": "\#(valid)", "client_ip": "203.0.113.7\u0000x"}"#.utf8), ["invalid_field"]),
                ("key with 0xFF", Array(#"{"ph"#.utf8) + [0xFF] + Array(#"one": "\#(valid)"}"#.utf8), ["invalid_json"]),
            ]
            for (name, body, codes) in bodies {
                let response = try Self.send(gate, body)
                #expect(response.status == 400, "\(name): \(response)")
                #expect(codes.contains(response.errorCode ?? "-"), "\(name): \(response)")
                #expect(response.header("X-Injected") == nil, "\(name)")
                try Self.expectStillServing(gate, phones, name)
            }
            try Self.expectNotReserved(gate, valid, "control characters")

            // In the path and the query of /v1/cooldowns.
            let targets: [(String, Set<String>)] = [
                ("/v1/cooldowns/%2B86138%0000138000", ["invalid_phone"]),
                ("/v1/cooldowns/%2B8613800138000%00", ["invalid_phone"]),
                ("/v1/cooldowns/%2B8613800138000%0d%0aX-Injected:%201", ["invalid_phone"]),
                ("/v1/cooldowns/%ff", ["invalid_phone"]),
                ("/v1/cooldowns/%2B86138%ff00138000", ["invalid_phone"]),
                ("/v1/cooldowns/%2", ["invalid_phone"]),
                ("/v1/cooldowns/%2B8613800138000?purpose=login%00", ["invalid_purpose"]),
                ("/v1/cooldowns/%2B8613800138000?purpose=login%0d%0aX-Injected:%201", ["invalid_purpose"]),
                ("/v1/cooldowns/%2B8613800138000?purpose=%ff", ["invalid_field", "invalid_purpose"]),
                ("/v1/cooldowns/%2B8613800138000?purpose=%zz", ["invalid_field", "invalid_purpose"]),
            ]
            for (target, codes) in targets {
                for method in ["GET", "DELETE"] {
                    let response = try gate.client().request(method, target)
                    #expect(response.status == 400, "\(method) \(target): \(response)")
                    #expect(codes.contains(response.errorCode ?? "-"), "\(method) \(target): \(response)")
                    #expect(response.header("X-Injected") == nil)
                }
                try Self.expectStillServing(gate, phones, target)
            }
            // Raw bytes that are not URL characters.
            for (name, bytes) in [("raw 0xFF in the path", Array("GET /v1/cooldowns/".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)),
                                  ("raw 0xFF in the query", Array("GET /v1/cooldowns/%2B8613800138000?purpose=".utf8) + [0xFF] + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))] {
                try Self.expectRefused(gate, bytes, [400], name)
                try Self.expectStillServing(gate, phones, name)
            }
        }
    }

    // MARK: - JSON

    @Test func deeplyNestedJSONWrongTypesAndHugeNumbersAreRefused() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            let valid = "+8613800138000"
            // 8 000 deep: 10 000 closed ones would pass the 16 KiB body limit (413).
            let deepArrays = String(repeating: "[", count: 8_000) + String(repeating: "]", count: 8_000)
            let bodies: [(String, String, String)] = [
                ("8 000 nested arrays", deepArrays, "invalid_json"),
                ("10 000 nested arrays in phone", #"{"phone": "# + String(repeating: "[", count: 10_000) + "}", "invalid_json"),
                ("2 500 nested objects", String(repeating: #"{"a":"#, count: 2_500) + "1" + String(repeating: "}", count: 2_500), "invalid_json"),
                ("10 000 unclosed arrays", String(repeating: "[", count: 10_000), "invalid_json"),
                ("33 nested arrays in an extra member", #"{"phone": "\#(valid)", "x": "# + String(repeating: "[", count: 33) + String(repeating: "]", count: 33) + "}", "invalid_json"),
                ("phone 1e999999", #"{"phone": 1e999999}"#, "invalid_field"),
                ("phone 123456789012345678901234567890", #"{"phone": 123456789012345678901234567890}"#, "invalid_field"),
                ("phone -0", #"{"phone": -0}"#, "invalid_field"),
                ("phone 1e-999999", #"{"phone": 1e-999999}"#, "invalid_field"),
                ("phone true", #"{"phone": true}"#, "invalid_field"),
                ("phone object", #"{"phone": {"number": "\#(valid)"}}"#, "invalid_field"),
                ("phone array", #"{"phone": ["\#(valid)"]}"#, "invalid_field"),
                ("phone null", #"{"phone": null}"#, "missing_field"),
                ("purpose number", #"{"phone": "\#(valid)", "purpose": 1e999999}"#, "invalid_field"),
                ("purpose false", #"{"phone": "\#(valid)", "purpose": false}"#, "invalid_field"),
                ("purpose array", #"{"phone": "\#(valid)", "purpose": ["login"]}"#, "invalid_field"),
                ("purpose object", #"{"phone": "\#(valid)", "purpose": {}}"#, "invalid_field"),
                ("client_ip number", #"{"phone": "\#(valid)", "client_ip": 3405803783}"#, "invalid_field"),
                ("client_ip array", #"{"phone": "\#(valid)", "client_ip": [203, 0, 113, 7]}"#, "invalid_field"),
                ("client_ip true", #"{"phone": "\#(valid)", "client_ip": true}"#, "invalid_field"),
                ("leading zero", #"{"phone": "\#(valid)", "n": 01}"#, "invalid_json"),
                ("bare minus", #"{"phone": "\#(valid)", "n": -}"#, "invalid_json"),
                ("dangling exponent", #"{"phone": "\#(valid)", "n": 1e}"#, "invalid_json"),
                ("NaN", #"{"phone": "\#(valid)", "n": NaN}"#, "invalid_json"),
                ("Infinity", #"{"phone": "\#(valid)", "n": Infinity}"#, "invalid_json"),
                ("hex number", #"{"phone": "\#(valid)", "n": 0x10}"#, "invalid_json"),
                ("top-level number", "1e999999", "invalid_json"),
                ("top-level string", #""\#(valid)""#, "invalid_json"),
                ("top-level null", "null", "invalid_json"),
                ("trailing comma", #"{"phone": "\#(valid)",}"#, "invalid_json"),
                ("single quotes", #"{'phone': '\#(valid)'}"#, "invalid_json"),
                ("comment", #"{"phone": "\#(valid)" /* hi */}"#, "invalid_json"),
            ]
            for (name, body, code) in bodies {
                let response = try Self.send(gate, Array(body.utf8))
                #expect(response.status == 400, "\(name): \(response)")
                #expect(response.errorCode == code, "\(name): \(response)")
                try Self.expectStillServing(gate, phones, name)
            }
            try Self.expectNotReserved(gate, valid, "JSON")

            // Huge numbers in members the server does not use are read and ignored.
            let phone = phones.next()
            let response = try Self.send(gate, Array(#"{"phone": "\#(phone)", "n": 1e999999, "m": 123456789012345678901234567890, "d": -0.0e-999999}"#.utf8))
            #expect(response.status == 200, "\(response)")
        }
    }

    // MARK: - Long URLs and purposes

    @Test func veryLongURLsAndPurposesAreRefused() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            let cases: [(String, String, Set<Int>, Bool)] = [
                ("64 KiB path", "/v1/cooldowns/" + String(repeating: "1", count: 64 * 1024), [400, 414, 431], true),
                ("64 KiB query", "/healthz?" + String(repeating: "a", count: 64 * 1024), [400, 414, 431], true),
                ("9 KiB query", "/healthz?" + String(repeating: "a", count: 9 * 1024), [431], true),
                ("7 000-char purpose in the query", "/v1/cooldowns/%2B8613800138000?purpose=" + String(repeating: "a", count: 7_000), [400], false),
                ("7 000-char phone in the path", "/v1/cooldowns/" + String(repeating: "1", count: 7_000), [400], false),
            ]
            for (name, target, statuses, mustClose) in cases {
                try Self.expectRefused(gate, Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), statuses, name, mustClose: mustClose)
                try Self.expectStillServing(gate, phones, name)
            }
            let longPurpose = String(repeating: "a", count: 10_000)
            let bodies: [(String, String, String)] = [
                ("10 000-char purpose", #"{"phone": "+8613800138000", "purpose": "\#(longPurpose)"}"#, "invalid_purpose"),
                ("10 000-char phone", #"{"phone": "+86\#(String(repeating: "1", count: 10_000))"}"#, "invalid_phone"),
                ("10 000-char client_ip", #"{"phone": "+8613800138000", "client_ip": "\#(String(repeating: "1", count: 10_000))"}"#, "invalid_field"),
                ("10 000-char member name", #"{"\#(longPurpose)": 1}"#, "missing_field"),
            ]
            for (name, body, code) in bodies {
                let response = try Self.send(gate, Array(body.utf8))
                #expect(response.status == 400, "\(name): \(response)")
                #expect(response.errorCode == code, "\(name): \(response)")
                try Self.expectStillServing(gate, phones, name)
            }
            let idempotency = try gate.client().send(#"{"phone": "+8613800138000"}"#, headers: [
                ("Content-Type", "application/json"), ("Idempotency-Key", String(repeating: "k", count: 4_000)),
            ])
            #expect(idempotency.status == 400 && idempotency.errorCode == "invalid_field", "\(idempotency)")
            try Self.expectNotReserved(gate, "+8613800138000", "long fields")
        }
    }

    // MARK: - Slow and idle connections

    /// 200 connections each send one header byte every 200 ms (slowloris) against a
    /// server capped at 100 connections per worker with a 1 s timeout: a normal
    /// client's requests still complete promptly, because the oldest idle connection
    /// is closed to make room for each new one.
    @Test func slowlorisDoesNotStarveOtherClients() throws {
        try withRunningGate(maxConnectionsPerWorker: 100, connectionTimeout: .seconds(1)) { gate in
            let phones = PhoneSequence()
            let report = try Self.slowloris(port: gate.port, connections: 200, duration: .seconds(3)) {
                try Self.expectStillServing(gate, phones, "during slowloris")
            }
            #expect(report.probes >= 10)
            #expect(report.badAnswers.isEmpty, "\(report.badAnswers)")
            let metrics = try PrometheusSamples(gate.client().get("/metrics").text)
            #expect((metrics.value("resendgate_http_connections_evicted_total", "") ?? 0) > 0, "no connection was evicted")

            // A connection that sends part of a request and falls silent is closed
            // after the connection timeout (1 s), with no 5xx.
            let silent = try (0..<20).map { _ in
                let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
                try connection.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                return connection
            }
            for connection in silent { Self.expectRefusedOrClosed(connection, nil, "silent connection") }
            try Self.expectStillServing(gate, phones, "after silent connections")
        }
    }

    /// 2 000 idle connections (within the file limit) against a server capped at 100
    /// per worker: they are evicted as needed, and a normal client is still served.
    @Test func aFloodOfIdleConnectionsDoesNotStarveOtherClients() throws {
        try withRunningGate(maxConnectionsPerWorker: 100) { gate in
            let phones = PhoneSequence()
            let count = Self.floodSize(wanted: 2_000)
            var idle: [RawHTTPConnection] = []
            idle.reserveCapacity(count)
            for index in 0..<count {
                idle.append(try RawHTTPConnection(port: gate.port, timeout: .seconds(3)))
                if index % 500 == 499 { try Self.expectStillServing(gate, phones, "flood at \(index + 1)") }
            }
            try Self.expectStillServing(gate, phones, "after the flood")
            let metrics = try PrometheusSamples(gate.client().get("/metrics").text)
            let open = metrics.value("resendgate_http_connections_open", "") ?? .infinity
            #expect(open <= 2 * 100 + 10, "open connections: \(open)")
            #expect((metrics.value("resendgate_http_connections_evicted_total", "") ?? 0) >= Double(count - 2 * 100 - 10))
            for connection in idle { connection.close() }
        }
    }

    /// The same slowloris and flood, plus a burst of the hostile requests above,
    /// against the built `resendgate serve` in a process of its own: it must still
    /// run afterwards and exit 0 on SIGTERM.
    @Test func theServeProcessSurvivesAndExitsZero() throws {
        let gate = try TestGate(serve: [
            "--workers", "2", "--region", "CN", "--max-connections", "100", "--connection-timeout", "1s", "--log-level", "warning",
        ])
        defer { gate.stop(grace: .seconds(2)) }
        let (server, port) = (try #require(gate.process), gate.port)
        let client = gate.client(timeout: .seconds(3))
        let phones = PhoneSequence()
        let check = { (context: String) throws in
            let started = StallWatch.mark()
            let health = try client.get("/healthz")
            // 500 ms of this process's running time (a frozen test process is not the gate's doing).
            let took = StallWatch.shared.ran(since: started)
            #expect(health.status == 200 && took < .milliseconds(500), "\(context): \(took) unstalled")
            #expect(try client.send(phone: phones.next()).status == 200, "\(context)")
        }

        let report = try Self.slowloris(port: port, connections: 200, duration: .seconds(2)) { try check("during slowloris") }
        #expect(report.badAnswers.isEmpty, "\(report.badAnswers)")

        var idle: [RawHTTPConnection] = []
        for _ in 0..<Self.floodSize(wanted: 2_000) { idle.append(try RawHTTPConnection(port: port, timeout: .seconds(3))) }
        try check("after the flood")
        for connection in idle { connection.close() }

        let hostile: [[UInt8]] = [
            Array("GARBAGE\r\n\r\n".utf8),
            Array("HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nGET /".utf8),
            Array("POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n".utf8),
            Array(("POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20000\r\n\r\n{\"phone\": "
                + String(repeating: "[", count: 10_000)).utf8),
            Array(("GET /" + String(repeating: "a", count: 64 * 1024) + " HTTP/1.1\r\n\r\n").utf8),
        ]
        for bytes in hostile {
            let connection = try RawHTTPConnection(port: port, timeout: .seconds(3))
            try? connection.write(bytes)
            if let response = try? connection.readResponse() {
                #expect((400..<500).contains(response.status), "\(response)")
            }
        }
        try check("after hostile requests")
        #expect(server.isRunning, "\(server.stderr)")

        server.signal(SIGTERM)
        let result = try #require(server.waitForExit(timeout: .seconds(8)), "still running 8 s after SIGTERM")
        #expect(result.status == .exited(0), "\(result)")
    }
}

// MARK: - Helpers

/// Distinct valid Chinese mobile numbers, one per call.
final class PhoneSequence: @unchecked Sendable {
    private var counter = 0

    func next() -> String {
        counter += 1
        let digits = String(counter)
        return "+861380013" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension HostileInputTests {
    /// Sends `bytes` on a new connection and expects a 4xx (one of `statuses` when
    /// given) or a clean close; with `mustClose`, an answer must be followed by a close.
    static func expectRefused(
        _ gate: RunningGate, _ bytes: [UInt8], _ statuses: Set<Int>?, _ context: String, mustClose: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(3))
        // The server may answer and close while we still write (413): what it answered counts.
        try? connection.write(bytes)
        expectRefusedOrClosed(
            connection, statuses, context, mustClose: mustClose, bodyless: bytes.starts(with: Array("HEAD ".utf8)),
            sourceLocation: sourceLocation)
    }

    /// Reads what the server does next on `connection`: a 4xx, or a clean close.
    static func expectRefusedOrClosed(
        _ connection: RawHTTPConnection, _ statuses: Set<Int>?, _ context: String, mustClose: Bool = false,
        bodyless: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let response = try connection.readResponse(bodyless: bodyless)
            #expect((400..<500).contains(response.status), "\(context): \(response)", sourceLocation: sourceLocation)
            if let statuses {
                #expect(statuses.contains(response.status), "\(context): \(response)", sourceLocation: sourceLocation)
            }
            if mustClose {
                #expect(connection.closedByPeer(within: .seconds(2)), "\(context): connection left open", sourceLocation: sourceLocation)
            }
        } catch RawHTTPError.closed {
            // A clean close, with no answer: fine.
        } catch {
            Issue.record("\(context): no answer and no close: \(error)", sourceLocation: sourceLocation)
        }
    }

    /// `/healthz` answers within 500 ms and a valid send (a fresh number) is allowed.
    static func expectStillServing(
        _ gate: RunningGate, _ phones: PhoneSequence, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let client = HTTPTestClient(port: gate.port, timeout: .seconds(2))
        let started = StallWatch.mark()
        let health = try client.get("/healthz")
        // 500 ms of this process's running time: the gate runs in it, and a process frozen
        // meanwhile (a loaded CI machine) is not the gate's doing.
        let elapsed = StallWatch.shared.ran(since: started)
        #expect(health.status == 200, "\(context): \(health)", sourceLocation: sourceLocation)
        #expect(elapsed < .milliseconds(500), "\(context): /healthz took \(elapsed) unstalled, \(ContinuousClock.now - started) in all", sourceLocation: sourceLocation)
        let send = try client.send(phone: phones.next())
        #expect(send.status == 200, "\(context): \(send)", sourceLocation: sourceLocation)
    }

    /// The number has no cooldown: nothing reserved it.
    static func expectNotReserved(
        _ gate: RunningGate, _ phone: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let encoded = phone.replacingOccurrences(of: "+", with: "%2B")
        let response = try gate.client().get("/v1/cooldowns/\(encoded)")
        #expect(response.status == 200, "\(context): \(response)", sourceLocation: sourceLocation)
        #expect(try response.decode(CooldownBody.self).active == false, "\(context): \(phone) was reserved", sourceLocation: sourceLocation)
    }

    /// `POST /v1/sends` with exactly these body bytes.
    static func send(_ gate: RunningGate, _ body: [UInt8]) throws -> RawHTTPResponse {
        try gate.client().request("POST", "/v1/sends", headers: [("Content-Type", "application/json")], body: body)
    }

    struct SlowlorisReport {
        var probes = 0
        /// Anything a slow connection received that was not a 4xx.
        var badAnswers: [String] = []
    }

    /// Opens `connections` connections that each send one header byte every 200 ms
    /// for `duration`, calling `probe` after each round; then reads what each got.
    static func slowloris(port: Int, connections: Int, duration: Duration, probe: () throws -> Void) throws -> SlowlorisReport {
        let header = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8) + [UInt8](repeating: UInt8(ascii: "s"), count: 1000)
        // A short timeout: the final read of each still-open connection must not wait long.
        let slow = try (0..<connections).map { _ in try RawHTTPConnection(port: port, timeout: .milliseconds(5)) }
        var report = SlowlorisReport()
        let deadline = ContinuousClock.now + duration
        var offset = 0
        while ContinuousClock.now < deadline {
            let round = ContinuousClock.now
            for connection in slow { try? connection.write([header[offset]]) }
            offset += 1
            try probe()
            report.probes += 1
            let rest = .milliseconds(200) - (ContinuousClock.now - round)
            if rest > .zero { usleep(UInt32(rest / .microseconds(1))) }
        }
        for connection in slow {
            if let response = try? connection.readResponse(), !(400..<500).contains(response.status) {
                report.badAnswers.append(response.statusLine)
            }
            connection.close()
        }
        return report
    }

    /// `wanted`, or fewer when the open-file limit (both ends live in this process
    /// for an in-process server) would not allow it.
    static func floodSize(wanted: Int) -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let available = Int(limit.rlim_cur) - 1_000
        return max(100, min(wanted, available / 2))
    }
}
