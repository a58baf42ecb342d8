#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Platform constants

/// A close-on-exec stream socket's type, where the platform has the flag.
#if canImport(Glibc)
let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
private let shutdownWrite = Int32(SHUT_WR)
#else
let streamType = SOCK_STREAM
private let sendFlags: Int32 = 0
private let shutdownWrite = SHUT_WR
#endif

/// Why a socket call failed: the call, its `errno` and its text.
struct SocketFailure: Error, CustomStringConvertible {
    let call: String
    let code: Int32

    var isRefused: Bool { code == ECONNREFUSED }
    var isTimeout: Bool { code == EAGAIN || code == EWOULDBLOCK }
    var description: String { "\(call): \(errnoText(code))" }
}

/// The one blocking stream socket of the test support (the RESP client and the HTTP test
/// connection both sit on it), with read/write deadlines, owned by one caller at a time.
/// Never raises SIGPIPE; created close-on-exec so child processes do not inherit it.
final class BlockingSocket {
    private(set) var fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit { close() }

    /// Connects to `127.0.0.1:port`. `receiveBuffer` and `sendBuffer` shrink the socket's
    /// buffers (so the window a peer may fill) to about that many bytes.
    static func open(
        port: Int, timeout: Duration, receiveBuffer: Int32? = nil, sendBuffer: Int32? = nil
    ) -> Result<BlockingSocket, SocketFailure> {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return open(family: AF_INET, address: address, timeout: timeout, receiveBuffer: receiveBuffer, sendBuffer: sendBuffer)
    }

    /// Connects to `127.0.0.1:port`, or throws `TestSupportError.connection`.
    static func connect(port: Int, timeout: Duration) throws -> BlockingSocket {
        try open(port: port, timeout: timeout)
            .mapError { TestSupportError.connection.with("cannot connect to 127.0.0.1:\(port): \($0)") }.get()
    }

    /// Connects to a unix domain socket.
    static func connect(unixPath path: String, timeout: Duration) throws -> BlockingSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw TestSupportError.connection.with("unix socket path is longer than \(capacity - 1) bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return try open(family: AF_UNIX, address: address, timeout: timeout, receiveBuffer: nil, sendBuffer: nil)
            .mapError { TestSupportError.connection.with("cannot connect to unix:\(path): \($0)") }.get()
    }

    /// Connects to `address` (a `sockaddr_in` or `sockaddr_un` of `family`).
    private static func open<Address>(
        family: Int32, address: Address, timeout: Duration, receiveBuffer: Int32?, sendBuffer: Int32?
    ) -> Result<BlockingSocket, SocketFailure> {
        let fd = socket(family, streamType, 0)
        guard fd >= 0 else { return .failure(SocketFailure(call: "socket()", code: errno)) }
        let socket = BlockingSocket(fd: fd)
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        for (option, size) in [(SO_RCVBUF, receiveBuffer), (SO_SNDBUF, sendBuffer)] {
            guard var bytes = size else { continue }
            if setsockopt(fd, SOL_SOCKET, option, &bytes, socklen_t(MemoryLayout<Int32>.size)) != 0 {
                return .failure(SocketFailure(call: "setsockopt(buffer size)", code: errno))
            }
        }
        // The connect gets at least 5 s, whatever the I/O timeout: a test that gives reads and
        // writes 2 ms does not mean its connects (on a loaded machine a full accept queue holds
        // a SYN for longer, and connect() fails with EINPROGRESS).
        socket.setTimeout(max(timeout, .seconds(5)))
        let connected = withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard connected == 0 else { return .failure(SocketFailure(call: "connect()", code: errno)) }
        socket.setTimeout(timeout)
        return .success(socket)
    }

    /// Sets the send, receive (and, on Linux, connect) deadline.
    func setTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval()
        value.tv_sec = .init(max(0, seconds))
        value.tv_usec = .init(max(0, attoseconds / 1_000_000_000_000))
        if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1 }  // 0 would mean "block forever"
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes as much of `bytes` as the peer takes before a write fails or waits past the
    /// deadline; returns how many bytes that was and why it stopped early, if it did.
    func write(_ bytes: some Collection<UInt8>) -> (written: Int, failure: SocketFailure?) {
        let bytes = Array(bytes)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, sendFlags) }
            if written > 0 {
                offset += written
            } else if !(written < 0 && errno == EINTR) {
                return (offset, SocketFailure(call: "send()", code: written == 0 ? EPIPE : errno))
            }
        }
        return (offset, nil)
    }

    /// Writes every byte or throws.
    func sendAll(_ bytes: [UInt8]) throws {
        if let failure = write(bytes).failure { throw Self.supportError(failure) }
    }

    /// Appends what is available (at least one byte) to `buffer` and returns how many bytes
    /// that was; 0 at the end of the stream. Throws past the deadline or on an error.
    func read(into buffer: inout [UInt8], maximum: Int = 16 * 1024) throws(SocketFailure) -> Int {
        var chunk = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, maximum, 0) }
            if count >= 0 {
                buffer += chunk[..<count]
                return count
            }
            if errno != EINTR { throw SocketFailure(call: "recv()", code: errno) }
        }
    }

    /// Reads what is available (at least one byte), or throws on EOF, error or deadline.
    func receive(maximum: Int = 16 * 1024) throws -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            guard try read(into: &bytes, maximum: maximum) > 0 else {
                throw TestSupportError.connection.with("the peer closed the connection")
            }
        } catch let failure as SocketFailure {
            throw Self.supportError(failure)
        }
        return bytes
    }

    /// Whether there is something to read (or the end of the stream) within `milliseconds`.
    func isReadable(within milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, milliseconds) > 0
    }

    /// Half-closes: the peer reads end-of-file, and may still answer.
    func shutdownWriting() {
        if fd >= 0 { _ = shutdown(fd, shutdownWrite) }
    }

    /// Closes with a reset (SO_LINGER 0) instead of a FIN: the peer's next read fails.
    func reset() {
        guard fd >= 0 else { return }
        var value = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    func close() {
        if fd >= 0 {
            _ = systemClose(fd)
            fd = -1
        }
    }

    private static func supportError(_ failure: SocketFailure) -> TestSupportError {
        if failure.isTimeout {
            return TestSupportError.timeout.with("\(failure.call) timed out (is the server paused or busy?)")
        }
        return TestSupportError.connection.with(failure.description)
    }
}

// MARK: - Helpers

func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

private func systemClose(_ fd: Int32) -> Int32 {
    close(fd)
}
