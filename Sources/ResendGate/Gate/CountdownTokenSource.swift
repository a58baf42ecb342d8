import CCrypto

/// Countdown tokens for one event loop, cut from a block of 4 KiB of random bytes
/// that is refilled from OpenSSL's DRBG once every 256 tokens: asking OpenSSL for 16
/// bytes at a time cost about 1.5 us a token (locks, a fork check, a DRBG step), a
/// few percent of a request. The bytes are as unpredictable as OpenSSL's own output;
/// each is handed out once and then overwritten. Confined to one thread, like its loop.
final class CountdownTokenSource {
    private static let blockSize = 4096
    private var block = [UInt8](repeating: 0, count: CountdownTokenSource.blockSize)
    private var used = CountdownTokenSource.blockSize

    init() {}

    /// A fresh token, never handed out before.
    func next() -> CountdownToken {
        if used + 16 > Self.blockSize {
            block.withUnsafeMutableBytes { Self.fill($0) }
            used = 0
        }
        let token = block.withUnsafeMutableBytes { all in
            let bytes = UnsafeMutableRawBufferPointer(rebasing: all[used..<used + 16])
            defer { bytes.initializeMemory(as: UInt8.self, repeating: 0) }
            return CountdownToken(randomBytes: UnsafeRawBufferPointer(bytes))
        }
        used += 16
        return token
    }

    /// Fills `buffer` from OpenSSL's DRBG, or from the kernel when OpenSSL cannot seed itself.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        if RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 { return }
        var generator = SystemRandomNumberGenerator()
        var index = 0
        while index < buffer.count {
            withUnsafeBytes(of: generator.next() as UInt64) { word in
                for byte in word where index < buffer.count {
                    buffer[index] = byte
                    index += 1
                }
            }
        }
    }
}
