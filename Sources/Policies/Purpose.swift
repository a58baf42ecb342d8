/// What a code is sent for (`login`, `signup`): each purpose has its own cooldown.
/// Matches `[a-z0-9_-]{1,32}`, so it is safe inside a Redis key.
public struct Purpose: Sendable, Hashable, CustomStringConvertible {
    public let name: String

    /// The purpose used when a caller names none.
    public static let `default` = Purpose(unchecked: "default")

    /// `name` as a purpose, or nil when it does not match `[a-z0-9_-]{1,32}` (the gate's
    /// `Purpose(_:)` throws `invalid_purpose` instead).
    public init?(validating name: String) {
        let bytes = name.utf8
        guard (1...32).contains(bytes.count), bytes.allSatisfy(Self.isAllowed) else { return nil }
        self.name = name
    }

    private init(unchecked name: String) {
        self.name = name
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    public var description: String { name }
}
