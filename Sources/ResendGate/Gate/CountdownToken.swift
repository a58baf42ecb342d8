/// The unguessable handle of one running cooldown, returned by a reserve as
/// `countdown_token`: 16 random bytes (128 bits, from OpenSSL's DRBG, which the
/// kernel's CSPRNG seeds) in base64url without padding, so always 22 characters
/// of `[A-Za-z0-9_-]`. It reveals nothing about the number it counts for.
public struct CountdownToken: Hashable, Sendable, CustomStringConvertible {
    /// The 22 characters.
    public let text: String

    /// The length of every token.
    public static let length = 22

    /// The token of 16 random bytes (a `CountdownTokenSource` cuts them from its block).
    init(randomBytes: UnsafeRawBufferPointer) {
        precondition(randomBytes.count == 16)
        text = Self.base64URL(randomBytes)
    }

    /// Accepts exactly a token's shape (22 characters of `[A-Za-z0-9_-]`) and
    /// nothing else, so malformed input never reaches Redis.
    public init?(validating text: Substring) {
        guard text.utf8.count == Self.length, text.utf8.allSatisfy(Self.isTokenByte) else { return nil }
        self.text = String(text)
    }

    public init?(validating text: String) {
        self.init(validating: Substring(text))
    }

    public var description: String { text }

    /// The Redis key that maps this token to its cooldown key: `<prefix>:countdown:{<token>}`.
    public func key(prefix: String) -> String {
        "\(prefix):countdown:{\(text)}"
    }

    // MARK: - base64url

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// base64url without padding.
    static func base64URL(_ input: UnsafeRawBufferPointer) -> String {
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
            switch input.count - index {
            case 1:
                let chunk = UInt32(input[index]) << 16
                emit(chunk >> 18); emit(chunk >> 12)
            case 2:
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                emit(chunk >> 18); emit(chunk >> 12); emit(chunk >> 6)
            default:
                break
            }
            return written
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
