import Foundation
import ResendGateTestSupport
import Testing

/// One client sends "phones" no parse cache should keep: 8 000 distinct 16 KiB texts
/// (each became a cache key before its length was checked: 36 MB to 166 MB in one
/// worker), then 1 000 distinct 7 KiB ones in the path. Every one is refused with 400
/// `invalid_phone`, nothing reaches Redis, and the worker's resident memory stays
/// under 64 MB. (The cache's own entry and byte bounds: `PhoneInputBoundTests`.)
@Suite("Abuse: phone text the cache must not keep", .serialized, .ownThread)
struct AbusePhoneCacheTests {
    static let residentBound = MemoryBounds.asserted ? 64 << 20 : Int.max

    @Test func eightThousandDistinct16KiBPhonesLeaveMemoryBounded() throws {
        try withInputAbuseGate { gate in
            // Warm up: the parser, the router and the connection code have run once.
            #expect(try gate.client().send(phone: "+44 7911 123456 (0)!!!").status == 400)
            let before = try gate.residentBytes()

            // One request, its four index digits rewritten each time: distinct phones of a
            // constant length, just under the 16 KiB body limit, built without a String each.
            let body = Array(#"{"phone": "+440000 "#.utf8) + [UInt8](repeating: UInt8(ascii: "7"), count: 16 * 1024 - 40) + Array(#""}"#.utf8)
            var request = Array(("POST /v1/sends HTTP/1.1\r\nHost: 127.0.0.1:\(gate.port)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
            let digits = request.count - body.count + 14
            let connection = try RawHTTPConnection(port: gate.port, timeout: .seconds(10))
            var refused = 0
            for index in 0..<8_000 {
                var rest = index
                for offset in (0..<4).reversed() {
                    request[digits + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                try connection.write(request)
                let response = try connection.readResponse()
                if response.status == 400 && response.errorCode == "invalid_phone" { refused += 1 }
            }
            #expect(refused == 8_000)
            let afterBodies = try gate.residentBytes()
            #expect(afterBodies < Self.residentBound,
                    "RSS \(afterBodies >> 20) MB after 8 000 16 KiB phones (\(before >> 20) MB before)")

            // The same through the path: distinct 7 KiB phones (under the 8 KiB header limit).
            let padding = String(repeating: "7", count: 7 * 1024)
            for index in 0..<1_000 {
                try connection.write(gate.client().requestBytes("GET", "/v1/cooldowns/%2B44\(index)\(padding)", keepAlive: true))
                #expect(try connection.readResponse().status == 400)
            }
            let after = try gate.residentBytes()
            #expect(after < Self.residentBound, "RSS \(after >> 20) MB at the end (\(before >> 20) MB before)")
            #expect(try gate.redisKeys() == [], "a refused phone must write nothing")
        }
    }
}
