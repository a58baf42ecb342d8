import CHTTPConnection
import Testing

/// The framing's last leniencies, closed (issue 34, item 3), checked on the parser the
/// server and the fuzzer share: Transfer-Encoding on HTTP/1.0 (RFC 9112 §6.1), a repeated
/// Authorization or Content-Type, trailer lines that are not field lines (RFC 9112
/// §7.1.2), and CONNECT with content (RFC 9110 §9.3.6). `FramingStrictnessLiveTests`
/// checks the same against a running gate, with the close and what was reserved.
@Suite struct FramingStrictnessTests {
    /// 1 for a whole request, 0 for one not whole yet, -status for a refusal.
    static func parse(_ text: String) -> Int32 {
        var bytes = Array(text.utf8)
        var request = rg_http_request()
        let headers = UnsafeMutablePointer<rg_http_header>.allocate(capacity: Int(RG_HTTP_MAX_HEADERS))
        defer { headers.deallocate() }
        var consumed = 0
        return rg_http_parse_whole(&bytes, bytes.count, 8 << 10, 16 << 10, &request, headers, &consumed)
    }

    static let chunkedBody = "5\r\nhello\r\n0\r\n"

    @Test func transferEncodingOnHTTP10IsRefused() {
        #expect(Self.parse("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + Self.chunkedBody + "\r\n") == -400)
        #expect(Self.parse("POST /x HTTP/1.0\r\ntransfer-encoding: chunked\r\nConnection: keep-alive\r\n\r\n"
                           + Self.chunkedBody + "\r\n") == -400)
        // Refused from the head alone: nothing of the body need arrive.
        #expect(Self.parse("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == -400)
        #expect(Self.parse("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + Self.chunkedBody + "\r\n") == 1)
        #expect(Self.parse("POST /x HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello") == 1)
    }

    @Test func aRepeatedAuthorizationOrContentTypeIsRefused() {
        let head = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
        for fields in [
            "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n",
            "Authorization: Bearer a\r\nauthorization: Bearer a\r\n",  // the same value, another case
            "AUTHORIZATION: Bearer a\r\nX-Other: 1\r\nAuthorization: \r\n",  // an empty one counts
            "Content-Type: application/json\r\nContent-Type: text/plain\r\n",
            "content-type: application/json\r\nCONTENT-TYPE: application/json\r\n",
        ] {
            #expect(Self.parse(head + fields + "\r\n{}") == -400, "\(fields)")
        }
        #expect(Self.parse(head + "Authorization: Bearer a\r\nContent-Type: application/json\r\n\r\n{}") == 1)
        #expect(Self.parse(head + "Authorization-Extra: a\r\nX-Authorization: b\r\nAuthorization: c\r\n\r\n{}") == 1)
    }

    @Test func trailerLinesMustBeFieldLines() {
        let head = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + Self.chunkedBody
        #expect(Self.parse(head + "\r\n") == 1)
        #expect(Self.parse(head + "X-Checksum: abc\r\nX-Empty:\r\n\r\n") == 1)
        for trailer in [
            "GET /v1/sends HTTP/1.1\r\nHost: a\r\n",  // a pipelined request's head
            "X-Checksum: abc\r\nGET / HTTP/1.1\r\n",
            " folded: value\r\n",
            "\tfolded\r\n",
            "NoColon\r\n",
            ": no name\r\n",
            "Bad Name: value\r\n",
            "Name : value\r\n",
            "{\"phone\": \"+8613800138000\"}\r\n",
        ] {
            #expect(Self.parse(head + trailer + "\r\n") == -400, "\(trailer.debugDescription)")
        }
        // Refused once the line is whole, before the end of the trailer arrives.
        #expect(Self.parse(head + "GET / HTTP/1.1\r\n") == -400)
        #expect(Self.parse(head + "X-Checksum: ab") == 0)
    }

    @Test func connectWithContentIsRefusedLikeHeadAndTrace() {
        #expect(Self.parse("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 5\r\n\r\nhello") == -400)
        #expect(Self.parse("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nTransfer-Encoding: chunked\r\n\r\n"
                           + Self.chunkedBody + "\r\n") == -400)
        #expect(Self.parse("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n") == 1)
        #expect(Self.parse("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 0\r\n\r\n") == 1)
        for method in ["HEAD", "TRACE"] {
            #expect(Self.parse("\(method) /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello") == -400)
        }
    }
}
