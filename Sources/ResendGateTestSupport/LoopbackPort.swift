#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loopback TCP ports for tests.
public enum LoopbackPort {
    /// A port on 127.0.0.1 that was free a moment ago: binds port 0, reads the kernel's choice
    /// back and closes. Another process may take it before you do; callers retry on collision.
    public static func free() throws -> Int {
        let (fd, port) = try bindAny()
        close(fd)
        return port
    }

    /// A port on 127.0.0.1 that refuses connections until the process exits: bound and never
    /// listening, so no other process (a test's redis-server) can take it meanwhile, as it
    /// could a port `free()` gave back.
    public static func refusing() throws -> Int {
        try bindAny().port
    }

    private static func bindAny() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw TestSupportError.connection.with("socket(): \(errnoText())") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestSupportError.connection.with("cannot bind 127.0.0.1:0: \(errnoText())")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether something accepts TCP connections on `127.0.0.1:port` right now.
    public static func isAccepting(_ port: Int) -> Bool {
        (try? BlockingSocket.connect(port: port, timeout: .milliseconds(500))) != nil
    }
}
