#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Platform constants

#if canImport(Glibc)
private let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let streamType = SOCK_STREAM
private let sendFlags: Int32 = 0
#endif

/// A blocking stream socket with read/write deadlines, owned by one caller at a time.
/// Never raises SIGPIPE; created close-on-exec so child processes do not inherit it.
final class BlockingSocket {
    private var fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit { close() }

    /// Connects to `127.0.0.1:port` (or another IPv4 literal).
    static func connect(host: String, port: Int, timeout: Duration) throws -> BlockingSocket {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw TestSupportError.connection.with("\(host) is not an IPv4 address")
        }
        let socket = try open(family: AF_INET, timeout: timeout)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            throw TestSupportError.connection.with("cannot connect to \(host):\(port): \(errnoText())")
        }
        return socket
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
        let socket = try open(family: AF_UNIX, timeout: timeout)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            throw TestSupportError.connection.with("cannot connect to unix:\(path): \(errnoText())")
        }
        return socket
    }

    private static func open(family: Int32, timeout: Duration) throws -> BlockingSocket {
        let fd = socket(family, streamType, 0)
        guard fd >= 0 else { throw TestSupportError.connection.with("socket(): \(errnoText())") }
        let socket = BlockingSocket(fd: fd)
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        socket.setTimeout(timeout)
        return socket
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

    /// Writes every byte or throws.
    func sendAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, sendFlags) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                throw transportError("send")
            }
        }
    }

    /// Reads what is available (at least one byte), or throws on EOF, error or deadline.
    func receive(maximum: Int = 16 * 1024) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, maximum, 0) }
            if count > 0 { return Array(chunk[..<count]) }
            if count == 0 { throw TestSupportError.connection.with("the peer closed the connection") }
            if errno == EINTR { continue }
            throw transportError("recv")
        }
    }

    func close() {
        if fd >= 0 {
            _ = systemClose(fd)
            fd = -1
        }
    }

    private func transportError(_ call: String) -> TestSupportError {
        if errno == EAGAIN || errno == EWOULDBLOCK {
            return TestSupportError.timeout.with("\(call) timed out (is the server paused or busy?)")
        }
        return TestSupportError.connection.with("\(call): \(errnoText())")
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
