import CHiredis

/// One reply from Redis, copied out of hiredis's buffers.
public enum RedisReply: Sendable, Equatable {
    case status(String)
    case error(String)
    case integer(Int)
    case bulk([UInt8])
    case null
    indirect case array([RedisReply])

    init(_ reply: UnsafePointer<redisReply>) {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STATUS: self = .status(Self.text(r))
        case REDIS_REPLY_ERROR: self = .error(Self.text(r))
        case REDIS_REPLY_INTEGER: self = .integer(Int(r.integer))
        case REDIS_REPLY_STRING:
            self = .bulk(r.str.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(r.len))) } ?? [])
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(r.elements))
            for index in 0..<Int(r.elements) {
                if let element = r.element[index] { items.append(RedisReply(element)) } else { items.append(.null) }
            }
            self = .array(items)
        default: self = .null
        }
    }

    private static func text(_ reply: redisReply) -> String {
        guard let str = reply.str else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: str, count: Int(reply.len)), as: UTF8.self)
    }

    /// The integer of an integer reply.
    public var integer: Int? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The text of a bulk or status reply.
    public var string: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }
}
