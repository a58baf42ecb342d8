import CCrypto

/// Cooldown nonces for one event loop, cut from 4 KiB of OpenSSL DRBG output refilled every
/// 341 nonces: a few bytes at a time cost about 1.5 us each (locks, a fork check, a DRBG
/// step), a few percent of a request. Each byte is handed out once, then overwritten.
/// Confined to one thread, like its loop.
final class CountdownTokenSource {
    private static let blockSize = 4096
    private var block = [UInt8](repeating: 0, count: CountdownTokenSource.blockSize)
    private var used = CountdownTokenSource.blockSize

    /// A fresh nonce, never handed out before.
    func next() -> CooldownNonce {
        let size = CooldownNonce.byteCount
        if used + size > Self.blockSize {
            block.withUnsafeMutableBytes { Self.fill($0) }
            used = 0
        }
        let nonce = block.withUnsafeMutableBytes { all in
            let bytes = UnsafeMutableRawBufferPointer(rebasing: all[used..<used + size])
            defer { bytes.initializeMemory(as: UInt8.self, repeating: 0) }
            return CooldownNonce(bytes: Array(bytes))
        }
        used += size
        return nonce
    }

    /// Fills `buffer` from OpenSSL's DRBG, or from the kernel when OpenSSL cannot seed itself.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        if RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 { return }
        var generator = SystemRandomNumberGenerator()
        for index in buffer.indices { buffer[index] = generator.next() }
    }
}

/// What one cooldown's Redis key holds: 12 random bytes (96 bits) in base64url, 16
/// characters. It names that cooldown: a countdown token carries it (as its AES-GCM IV),
/// the sends and refunds of a window are recorded under it, and a release publishes it.
struct CooldownNonce: Hashable {
    static let byteCount = 12
    static let textLength = 16

    let bytes: [UInt8]
    let text: String

    init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount)
        self.bytes = bytes
        text = CountdownToken.base64URL(bytes)
    }

    /// The nonce a cooldown key holds; nil for another program's value or an older version's token.
    init?(text: Substring) {
        guard text.utf8.count == Self.textLength, let bytes = CountdownToken.bytes(base64URL: text),
              bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
        self.text = String(text)
    }
}
