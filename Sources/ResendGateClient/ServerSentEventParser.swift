/// One event of a `text/event-stream`.
public struct ServerSentEvent: Hashable, Sendable {
    /// The `event:` field, `message` when the event named none.
    public var event: String
    /// The `data:` lines, joined with newlines.
    public var data: String

    /// Makes an event.
    public init(event: String, data: String) {
        self.event = event
        self.data = data
    }
}

/// An incremental `text/event-stream` parser (the WHATWG rules: lines ending in LF, CRLF
/// or CR, `field: value`, comments, a blank line dispatching), fed bytes as they arrive.
///
/// It holds at most one line and one event's data, and refuses a line or an event larger
/// than ``maximumEventBytes``: a hostile or broken server cannot make it grow without limit.
public struct ServerSentEventParser: Sendable {
    /// The largest line, and the largest event's data, accepted (64 KiB; a tick is ~50 bytes).
    public static let maximumEventBytes = 64 * 1024

    /// The last `retry:` the server sent, in milliseconds (nil until it sends one).
    public private(set) var retryMilliseconds: Int?
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: [UInt8] = []
    private var afterCR = false

    /// Makes an empty parser.
    public init() {}

    /// Reads `bytes` and returns the events they complete, in order.
    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) throws(ResendGateError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }  // the LF of a CRLF
            }
            switch byte {
            case 0x0A, 0x0D:
                afterCR = byte == 0x0D
                if let event = try endLine() { events.append(event) }
            default:
                guard line.count < Self.maximumEventBytes else { throw Self.tooLarge("line") }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() throws(ResendGateError) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }  // a comment, e.g. ": heartbeat"
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = line[..<colon]
        var value = colon < line.endIndex ? line[(colon + 1)...] : []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = Array(value)
        case "data":
            guard data.count + value.count < Self.maximumEventBytes else { throw Self.tooLarge("event") }
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "retry":
            if !value.isEmpty, value.count <= 9, value.allSatisfy({ (0x30...0x39).contains($0) }) {
                retryMilliseconds = Int(String(decoding: value, as: UTF8.self))
            }
        default:
            break  // `id:` and unknown fields: nothing this client needs
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll(keepingCapacity: true)
            eventType.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData || !eventType.isEmpty else { return nil }
        let name = eventType.isEmpty ? "message" : String(decoding: eventType, as: UTF8.self)
        return ServerSentEvent(event: name, data: String(decoding: data, as: UTF8.self))
    }

    private static func tooLarge(_ what: String) -> ResendGateError {
        ResendGateError(code: ResendGateError.streamTooLarge,
                        message: "an event stream \(what) is over \(maximumEventBytes) bytes")
    }
}
