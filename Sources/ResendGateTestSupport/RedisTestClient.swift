import Synchronization

/// A tiny synchronous Redis client for tests: one connection, one command at a time, RESP2.
///
/// Use it to arrange and inspect state around the code under test (`FLUSHALL`, `KEYS`,
/// `PTTL`, `SCRIPT FLUSH`, `DEBUG SLEEP`). After a transport error or a timeout the
/// connection is closed (the reply stream would be out of step); make a new client.
public final class RedisTestClient: Sendable {
    private struct State: ~Copyable {
        var socket: BlockingSocket?
        var buffer: [UInt8] = []
        var position = 0
    }

    private let state: Mutex<State>
    /// Where the client is connected, for messages.
    public let endpoint: String

    /// Connects to `127.0.0.1:port` and, when `password` is given, sends `AUTH`.
    public convenience init(port: Int, password: String? = nil, timeout: Duration = .seconds(5)) throws {
        let socket = try BlockingSocket.connect(port: port, timeout: timeout)
        try self.init(socket: socket, endpoint: "127.0.0.1:\(port)", password: password)
    }

    /// Connects over a unix domain socket and, when `password` is given, sends `AUTH`.
    public convenience init(unixSocketPath: String, password: String? = nil, timeout: Duration = .seconds(5)) throws {
        let socket = try BlockingSocket.connect(unixPath: unixSocketPath, timeout: timeout)
        try self.init(socket: socket, endpoint: "unix:\(unixSocketPath)", password: password)
    }

    private init(socket: sending BlockingSocket, endpoint: String, password: String?) throws {
        self.state = Mutex(State(socket: socket))
        self.endpoint = endpoint
        if let password {
            let reply = try command(["AUTH", password])
            guard reply == .simpleString("OK") else {
                throw TestSupportError.connection.with("AUTH at \(endpoint) failed: \(reply)")
            }
        }
    }

    /// Sends one command and returns its reply. A Redis error reply is returned as `.error`;
    /// transport problems throw `TestSupportError.connection`, `.timeout` or `.protocolViolation`.
    @discardableResult
    public func command(_ arguments: [String]) throws -> RESPValue {
        precondition(!arguments.isEmpty, "a Redis command needs a name")
        var request = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let bytes = Array(argument.utf8)
            request += Array("$\(bytes.count)\r\n".utf8) + bytes + [13, 10]
        }
        let endpoint = self.endpoint
        return try state.withLock { state throws -> RESPValue in
            guard let socket = state.socket else {
                throw TestSupportError.connection.with("the client for \(endpoint) is closed")
            }
            do {
                try socket.sendAll(request)
                var reader = Reader(socket: socket, buffer: state.buffer, position: state.position)
                let value = try reader.value()
                state.buffer = reader.buffer
                state.position = reader.position
                return value
            } catch {
                socket.close()
                state.socket = nil
                throw error
            }
        }
    }

    /// Sends one command: `try client.command("SET", "k", "v")`.
    @discardableResult
    public func command(_ arguments: String...) throws -> RESPValue {
        try command(arguments)
    }

    /// Closes the connection; later commands throw.
    public func close() {
        state.withLock { state in
            state.socket?.close()
            state.socket = nil
        }
    }
}

// MARK: - RESP2 reader

private struct Reader {
    let socket: BlockingSocket
    var buffer: [UInt8]
    var position: Int

    mutating func value() throws -> RESPValue {
        let line = try self.line()
        guard let kind = line.first else { throw violation("empty line") }
        let rest = String(decoding: line.dropFirst(), as: UTF8.self)
        switch kind {
        case UInt8(ascii: "+"): return .simpleString(rest)
        case UInt8(ascii: "-"): return .error(rest)
        case UInt8(ascii: ":"):
            guard let value = Int(rest) else { throw violation("bad integer \(rest)") }
            return .integer(value)
        case UInt8(ascii: "$"):
            guard let length = Int(rest) else { throw violation("bad bulk length \(rest)") }
            if length < 0 { return .null }
            let bytes = try self.bytes(length + 2)
            return .bulkString(String(decoding: bytes.dropLast(2), as: UTF8.self))
        case UInt8(ascii: "*"):
            guard let count = Int(rest) else { throw violation("bad array length \(rest)") }
            if count < 0 { return .null }
            var elements: [RESPValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try value()) }
            return .array(elements)
        default:
            throw violation("unexpected type byte \(kind)")
        }
    }

    private mutating func line() throws -> ArraySlice<UInt8> {
        while true {
            if let end = buffer[position...].firstIndex(of: 10) {
                guard end > position, buffer[end - 1] == 13 else { throw violation("line without CR LF") }
                let line = buffer[position..<(end - 1)]
                position = end + 1
                return line
            }
            try fill()
        }
    }

    private mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - position < count { try fill() }
        defer { position += count }
        return buffer[position..<(position + count)]
    }

    private mutating func fill() throws {
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer += try socket.receive()
    }

    private func violation(_ text: String) -> TestSupportError {
        TestSupportError.protocolViolation.with("not RESP: \(text)")
    }
}
