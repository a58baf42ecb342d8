import GateRuntime

/// The handle of one running cooldown (`countdown_token`): its purpose, number and nonce
/// sealed under the deployment's token secret (`CountdownTokenCipher`), in base64url. It
/// needs no key in Redis, reveals nothing about the number, cannot be forged, and goes
/// stale when its cooldown ends, is released or is replaced.
public struct CountdownToken: Hashable, Sendable, CustomStringConvertible {
    /// The base64url text.
    public let text: String

    /// The shortest and the longest a token can be (see `CountdownTokenCipher`).
    public static let lengths = 44...128

    /// Accepts exactly a token's shape (44 to 128 characters of `[A-Za-z0-9_-]`), so
    /// malformed input never reaches the cipher or Redis. Inlinable: a caller's string type is
    /// known where it calls, so the check runs on it directly, not through a generic's witnesses.
    @inlinable public init?(validating text: some StringProtocol) {
        guard Self.lengths.contains(text.utf8.count), text.utf8.allSatisfy({ Self.sextet($0) != nil }) else { return nil }
        self.text = String(text)
    }

    init(uncheckedText: String) {
        text = uncheckedText
    }

    public var description: String { text }

    // MARK: - base64url

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// base64url without padding.
    static func base64URL(_ input: [UInt8]) -> String {
        let length = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { out in
            var written = 0
            func emit(_ value: UInt32) {
                out[written] = alphabet[Int(value & 0x3F)]
                written += 1
            }
            var index = 0
            while index + 3 <= input.count {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                emit(chunk >> 18); emit(chunk >> 12); emit(chunk >> 6); emit(chunk)
                index += 3
            }
            // One or two bytes left: two or three characters.
            let rest = input.count - index
            if rest > 0 {
                let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                emit(chunk >> 18); emit(chunk >> 12)
                if rest == 2 { emit(chunk >> 6) }
            }
            return written
        }
    }

    /// The bytes of base64url text without padding, or nil for any other text
    /// (a length of 1 mod 4, a byte outside the alphabet, non-zero trailing bits).
    static func bytes(base64URL text: Substring) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0, bits = 0
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, so that each byte string has one text only.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }

    /// Lower-case hex digits as their bytes; nil for an odd count or any other byte.
    static func bytes(lowercaseHex text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = digits[index].lowercaseHexValue, let low = digits[index + 1].lowercaseHexValue else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    @usableFromInline static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
