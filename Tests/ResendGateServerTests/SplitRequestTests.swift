import ResendGateTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP framing reads a request as it arrives and resumes where it stopped: the
/// search for the head's end, a body awaited by its length, and a chunked body scanned
/// chunk by chunk. A request sent whole and the same request trickled in pieces of a few
/// bytes must get the same answer, for generated requests of every framing, valid and not.
@Suite("HTTP requests split anywhere", .serialized, .ownThread)
struct SplitRequestTests {
    @Test func aRequestTrickledInPiecesGetsTheAnswerItGetsWhole() throws {
        try withRunningGate { gate in
            var random = SplitRandom(seed: 27)
            for index in 0..<60 {
                let request = Self.request(&random, port: gate.port)
                let whole = try Self.answer(to: request, port: gate.port, pieces: [request.count])
                var pieces: [Int] = []
                var left = request.count
                while left > 0 {
                    let piece = min(left, 1 + random.next(below: 7))
                    pieces.append(piece)
                    left -= piece
                }
                let split = try Self.answer(to: request, port: gate.port, pieces: pieces)
                let text = String(decoding: request.prefix(300), as: UTF8.self)
                #expect(split.status == whole.status, "request \(index): \(text)")
                #expect(split.body == whole.body, "request \(index): \(text)")
                #expect(whole.status != 0, "request \(index) got no answer: \(text)")
            }
        }
    }

    /// Sends `request` in `pieces` (a short pause between them, so that each arrives on
    /// its own) and returns the status and body of the answer.
    static func answer(to request: [UInt8], port: Int, pieces: [Int]) throws -> (status: Int, body: [UInt8]) {
        let connection = try RawHTTPConnection(port: port, timeout: .seconds(5))
        defer { connection.close() }
        var offset = 0
        for piece in pieces {
            // A refusal can come before the rest is sent, and the connection close then.
            guard (try? connection.write(Array(request[offset..<(offset + piece)]))) != nil else { break }
            offset += piece
            if pieces.count > 1 { usleep(200) }
        }
        let response = try connection.readResponse()
        return (response.status, response.body)
    }

    /// A request whose answer depends on nothing stored (no send is reserved): `/healthz`,
    /// unknown paths, and bodies refused before Redis, in every framing.
    static func request(_ random: inout SplitRandom, port: Int) -> [UInt8] {
        let end = random.next(below: 4) == 0 ? "\n" : "\r\n"
        var head = ""
        var body: [UInt8] = []
        switch random.next(below: 4) {
        case 0:
            head = "GET /healthz HTTP/1.1" + end
        case 1:
            head = "GET /v1/countdowns/\(String(repeating: "A", count: random.next(below: 80))) HTTP/1.1" + end
        default:
            head = "POST /v1/sends HTTP/1.1" + end + "Content-Type: application/json" + end
            let bodies = [#"{"phone": 12}"#, #"{"phone": "+86 138 0013 8000", "#, #"{"purpose": "x"}"#, "[]",
                          String(repeating: " ", count: random.next(below: 300)) + "{}"]
            body = Array(bodies[random.next(below: bodies.count)].utf8)
        }
        head += (random.next(below: 2) == 0 ? "host" : "Host") + ": 127.0.0.1:\(port)" + end
        head += "Connection: close" + end
        for field in 0..<random.next(below: 4) {
            head += "X-Padding-\(field): \(String(repeating: "p", count: random.next(below: 200)))" + end
            if random.next(below: 8) == 0 { head += " folded onto the line before (refused)" + end }
        }
        guard !body.isEmpty else { return Array((head + end).utf8) }
        if random.next(below: 2) == 0 {
            return Array((head + "Content-Length: \(body.count)" + end + end).utf8) + body
        }
        // Chunked, cut at random places, sometimes with an extension or a bad size.
        var bytes = Array((head + "Transfer-Encoding: chunked" + end + end).utf8)
        var offset = 0
        while offset < body.count {
            let size = min(body.count - offset, 1 + random.next(below: 40))
            let extensionText = random.next(below: 5) == 0 ? ";name=value" : ""
            let sizeText = random.next(below: 30) == 0 ? "zz" : String(size, radix: 16)
            bytes += Array((sizeText + extensionText + "\r\n").utf8) + body[offset..<(offset + size)] + [13, 10]
            offset += size
        }
        return bytes + Array("0\r\n\r\n".utf8)
    }
}

/// A small deterministic generator (SplitMix64): the same requests on every run.
struct SplitRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
