/// A reply in the Redis serialization protocol (RESP2), as `RedisTestClient` reads it.
public enum RESPValue: Sendable, Hashable, CustomStringConvertible {
    /// `+OK`
    case simpleString(String)
    /// `-ERR ...`: a Redis error reply is a value, not a thrown error, so tests can assert on it.
    case error(String)
    /// `:42`
    case integer(Int)
    /// `$3\r\nfoo` (decoded as UTF-8; invalid bytes are replaced).
    case bulkString(String)
    /// `$-1` or `*-1`
    case null
    /// `*2\r\n...`
    case array([RESPValue])

    /// The text of a simple or bulk string.
    public var string: String? {
        switch self {
        case .simpleString(let s), .bulkString(let s): s
        default: nil
        }
    }

    /// The value of an integer reply.
    public var integer: Int? {
        if case .integer(let i) = self { return i }
        return nil
    }

    /// The elements of an array reply.
    public var array: [RESPValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Whether this is an error reply.
    public var isError: Bool {
        if case .error = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .simpleString(let s): "+\(s)"
        case .error(let s): "-\(s)"
        case .integer(let i): ":\(i)"
        case .bulkString(let s): "\"\(s)\""
        case .null: "(nil)"
        case .array(let a): "[" + a.map(\.description).joined(separator: ", ") + "]"
        }
    }
}
