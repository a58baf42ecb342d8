import Testing
@testable import ResendGateClient

/// The package's one chunk decoder, as `resendgate watch` and the test client use it:
/// whole bodies, bodies cut anywhere, extensions, trailers and malformed sizes.
struct ChunkedBodyTests {
    static let whole = Array("4\r\nWiki\r\n6;name=x\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n".utf8)

    @Test func decodesAWholeBodyWithExtensionsAndTrailers() throws {
        let decoded = try #require(ChunkedBody.decode(Self.whole))
        #expect(String(decoding: decoded.body, as: UTF8.self) == "Wikipedia in \r\n\r\nchunks.")
        #expect(decoded.isComplete)
        #expect(decoded.consumed == Self.whole.count)
    }

    /// Cut at every byte, the decoder hands out only whole chunks and says how far it read,
    /// so a reader that keeps the rest and appends the next bytes gets the same body.
    @Test func aBodyCutAnywhereDecodesTheSame() throws {
        for cut in 0...Self.whole.count {
            var pending = Array(Self.whole[..<cut])
            var body: [UInt8] = []
            let first = try #require(ChunkedBody.decode(pending))
            #expect(first.isComplete == (cut == Self.whole.count))
            body += first.body
            if !first.isComplete {
                pending.removeFirst(first.consumed)
                pending += Self.whole[cut...]
                let second = try #require(ChunkedBody.decode(pending))
                body += second.body
                #expect(second.isComplete)
            }
            #expect(String(decoding: body, as: UTF8.self) == "Wikipedia in \r\n\r\nchunks.", "cut at \(cut)")
        }
    }

    @Test func malformedOrHugeSizesAreRefused() {
        #expect(ChunkedBody.decode(Array("zz\r\nab\r\n".utf8)) == nil)
        #expect(ChunkedBody.decode(Array("-1\r\n".utf8)) == nil)
        #expect(ChunkedBody.decode(Array("FFFFFFFFFFFFFFFFF\r\n".utf8)) == nil)
        // The largest size Int holds is not refused but waited for, without overflow.
        #expect(ChunkedBody.decode(Array("7FFFFFFFFFFFFFFF\r\nab".utf8)) == .init(body: [], consumed: 0, isComplete: false))
    }
}
