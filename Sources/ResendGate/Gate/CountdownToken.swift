/// The unguessable handle of one running cooldown, returned by a reserve as
/// `countdown_token`: 16 random bytes (128 bits, from the system's CSPRNG, which
/// is `getrandom` on Linux) in base64url without padding, so always 22 characters
/// of `[A-Za-z0-9_-]`. It reveals nothing about the number it counts for.
public struct CountdownToken: Hashable, Sendable, CustomStringConvertible {
    /// The 22 characters.
    public let text: String

    /// The length of every token.
    public static let length = 22

    /// A fresh random token.
    public static func random() -> CountdownToken {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return CountdownToken(uncheckedText: Self.base64URL(bytes))
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

    private init(uncheckedText: String) {
        text = uncheckedText
    }

    public var description: String { text }

    /// The Redis key that maps this token to its cooldown key: `<prefix>:countdown:{<token>}`.
    public func key(prefix: String) -> String {
        "\(prefix):countdown:{\(text)}"
    }

    // MARK: - base64url

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(chunk >> UInt32(shift) & 0x3F)]) }
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let chunk = UInt32(bytes[index]) << 16
            for shift in [18, 12] { out.append(alphabet[Int(chunk >> UInt32(shift) & 0x3F)]) }
        case 2:
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            for shift in [18, 12, 6] { out.append(alphabet[Int(chunk >> UInt32(shift) & 0x3F)]) }
        default:
            break
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
