import Foundation
import ResendGate
import ResendGateServer
import ResendGateTestSupport
import Testing

/// Each of the framing's closed leniencies (issue 34, item 3) tried the way an attacker
/// would, against a running gate: a send hidden behind the framing is never reserved, the
/// outer request is refused with 400, and the connection closes.
@Suite("Framing: the last leniencies, closed", .serialized, .ownThread)
struct FramingStrictnessLiveTests {
    static let post = "POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"

    static func chunk(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n" }

    static func hiddenSend(_ phone: String) -> String {
        let json = #"{"phone": "\#(phone)"}"#
        return post + "Content-Length: \(json.utf8.count)\r\n\r\n" + json
    }

    /// RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing (a
    /// proxy of HTTP/1.0 reads its body up to the close), refused and closed.
    @Test func transferEncodingOnHTTP10Gets400AndClose() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence(), outer = phones.next(), hidden = phones.next()
            let bytes = "POST /v1/sends HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Self.chunk(#"{"phone": "\#(outer)"}"#) + "0\r\n\r\n" + Self.hiddenSend(hidden)
            try HostileInputTests.expectRefused(gate, Array(bytes.utf8), [400], "HTTP/1.0 chunked", mustClose: true)
            try HostileInputTests.expectNotReserved(gate, outer, "HTTP/1.0 chunked, the outer send")
            try HostileInputTests.expectNotReserved(gate, hidden, "HTTP/1.0 chunked, the hidden send")
        }
    }

    /// Two Authorization fields: a proxy that checks the first and a gate that took the
    /// other would disagree on who asks. Either order is refused, the valid key first or last.
    @Test func aRepeatedAuthorizationOrContentTypeGets400() throws {
        let key = RunningGate.apiKey
        try withRunningGate(apiKeys: [key]) { gate in
            let phones = PhoneSequence()
            let keyed = HTTPTestClient(port: gate.port, apiKey: key)
            for (first, second) in [("Bearer \(key)", "Bearer wrong-key-0123456789abcdef"),
                                    ("Bearer wrong-key-0123456789abcdef", "Bearer \(key)"),
                                    ("Bearer \(key)", "Bearer \(key)")] {
                let phone = phones.next()
                let response = try gate.client().request(
                    "POST", "/v1/sends", headers: [("Content-Type", "application/json"), ("Authorization", first),
                                                   ("Authorization", second)],
                    body: Array(#"{"phone": "\#(phone)"}"#.utf8))
                #expect(response.status == 400 && response.errorCode == "bad_request", "\(first) + \(second): \(response)")
                let peek = try keyed.get("/v1/cooldowns/" + phone.replacingOccurrences(of: "+", with: "%2B"))
                #expect(peek.status == 200 && peek.text.contains(#""active":false"#), "\(phone) was reserved: \(peek)")
            }
            let phone = phones.next()
            let response = try keyed.request(
                "POST", "/v1/sends", headers: [("Content-Type", "application/json"), ("Content-Type", "text/plain")],
                body: Array(#"{"phone": "\#(phone)"}"#.utf8))
            #expect(response.status == 400 && response.errorCode == "bad_request", "\(response)")
            #expect(try keyed.send(phone: phone).status == 200, "a refused request reserved \(phone)")
        }
    }

    /// After a chunked body's last chunk, a pipelined request's head where the trailer
    /// belongs is refused, not swallowed: the outer send is not decided either.
    @Test func aRequestHeadInTheTrailerGets400() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence(), outer = phones.next(), hidden = phones.next()
            let bytes = Self.post + "Transfer-Encoding: chunked\r\n\r\n" + Self.chunk(#"{"phone": "\#(outer)"}"#) + "0\r\n"
                + Self.hiddenSend(hidden)
            try HostileInputTests.expectRefused(gate, Array(bytes.utf8), [400], "request head as a trailer", mustClose: true)
            try HostileInputTests.expectNotReserved(gate, outer, "request head as a trailer, the outer send")
            try HostileInputTests.expectNotReserved(gate, hidden, "request head as a trailer, the hidden send")
            // A real trailer still works.
            let phone = phones.next()
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            try connection.write(Self.post + "Transfer-Encoding: chunked\r\n\r\n" + Self.chunk(#"{"phone": "\#(phone)"}"#)
                                 + "0\r\nX-Checksum: abc\r\n\r\n")
            let answer = try connection.readResponse()
            #expect(answer.status == 200 && answer.text.contains(#""allowed":true"#), "\(answer)")
        }
    }

    /// CONNECT has no content (RFC 9110 §9.3.6): its "body" hiding a send is refused with
    /// the CONNECT, and what follows is never read as a request.
    @Test func connectWithContentGets400AndClose() throws {
        try withRunningGate { gate in
            let phones = PhoneSequence()
            for framing in ["length", "chunked"] {
                let hidden = phones.next(), next = phones.next()
                let body = Self.hiddenSend(hidden)
                let head = "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n"
                let connect = framing == "length"
                    ? head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
                    : head + "Transfer-Encoding: chunked\r\n\r\n" + Self.chunk(body) + "0\r\n\r\n"
                try HostileInputTests.expectRefused(gate, Array((connect + Self.hiddenSend(next)).utf8), [400],
                                                    "CONNECT with a \(framing) body", mustClose: true)
                try HostileInputTests.expectNotReserved(gate, hidden, "CONNECT \(framing), the send in its body")
                try HostileInputTests.expectNotReserved(gate, next, "CONNECT \(framing), the send after it")
            }
        }
    }

    /// Empty lines before a request line are skipped (RFC 9112 §2.2), CRLF or LF; a bare CR
    /// is no line end (h11 refuses it; the framing skipped it), so it is refused too.
    @Test func onlyEmptyLinesBeforeARequestLineAreSkipped() throws {
        try withRunningGate { gate in
            let healthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            for prefix in ["\r\n", "\n", "\r\n\n\r\n"] {
                let response = try gate.client().request("GET", "/healthz")  // warm, and a baseline
                #expect(response.status == 200)
                let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
                try connection.write(prefix + healthz)
                #expect(try connection.readResponse().status == 200, "\(prefix.debugDescription)")
            }
            // The CR of an empty line may arrive alone.
            let split = try RawHTTPConnection(port: gate.port, timeout: .seconds(5))
            try split.write("\r")
            usleep(50_000)
            try split.write("\n" + healthz)
            #expect(try split.readResponse().status == 200)
            for prefix in ["\r", "\r\r\n", " \r\n"] {
                try HostileInputTests.expectRefused(gate, Array((prefix + healthz).utf8), [400], prefix.debugDescription,
                                                    mustClose: true)
            }
        }
    }

    /// A 409 goes out with its reason phrase (it went out as `409 Status`).
    @Test func aConflictGoesOutAs409Conflict() throws {
        try withRunningGate { gate in
            let response = try gate.client().request(
                "POST", "/v1/verifications", headers: [("Content-Type", "application/json")],
                body: Array(#"{"phone": "+8613800138009", "outcome": "failed"}"#.utf8))
            #expect(response.statusLine == "HTTP/1.1 409 Conflict", "\(response)")
            #expect(response.errorCode == "no_code_sent")
        }
    }
}
