import Foundation

/// The package's one decoder of HTTP/1.1 chunked bodies (`size[;ext]\r\n data \r\n ... 0\r\n
/// trailers \r\n`), for whole responses and for streams read a piece at a time: `resendgate
/// watch` and the test client read with it (URLSession does its own, so the app kit does not).
package enum ChunkedBody {
    /// What the bytes at hand decode to.
    package struct Decoded: Equatable, Sendable {
        /// The data of every whole chunk.
        package var body: [UInt8]
        /// How many input bytes those chunks (and, when complete, the last chunk and trailers) took.
        package var consumed: Int
        /// Whether the last chunk and the trailers' blank line were among them.
        package var isComplete: Bool
    }

    /// Decodes the whole chunks at the start of `bytes`; nil when a size line is not hex.
    package static func decode(_ bytes: some Collection<UInt8>) -> Decoded? {
        let bytes = Array(bytes)
        var decoded = Decoded(body: [], consumed: 0, isComplete: false)
        var index = 0
        while let lineEnd = lineEnd(in: bytes, from: index) {
            let sizeText = String(decoding: bytes[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else { return nil }
            var next = lineEnd + 2
            if size == 0 {
                // Trailers, then an empty line.
                while let end = Self.lineEnd(in: bytes, from: next) {
                    let empty = end == next
                    next = end + 2
                    if empty {
                        decoded.consumed = next
                        decoded.isComplete = true
                        return decoded
                    }
                }
                return decoded
            }
            guard bytes.count - next - 2 >= size else { return decoded }
            decoded.body += bytes[next..<(next + size)]
            next += size + 2
            index = next
            decoded.consumed = next
        }
        return decoded
    }

    private static func lineEnd(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }
}
