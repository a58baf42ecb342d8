/// What a code is sent for (`login`, `signup`): each purpose has its own cooldown.
/// Matches `[a-z0-9_-]{1,32}`, so it is safe inside a Redis key.
public struct Purpose: Sendable, Hashable, CustomStringConvertible {
    public let name: String

    /// The purpose used when a caller names none.
    public static let `default` = Purpose(unchecked: "default")

    public init(_ name: String) throws(GateError) {
        let bytes = name.utf8
        guard (1...32).contains(bytes.count), bytes.allSatisfy(Self.isAllowed) else {
            throw .invalidPurpose("purpose must match [a-z0-9_-]{1,32}")
        }
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
