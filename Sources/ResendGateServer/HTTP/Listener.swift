import CLibevent
import GateRuntime
#if canImport(Glibc)
import Glibc
#endif

/// A worker's listening socket, with `SO_REUSEPORT`: every worker listens on the same port
/// and the kernel spreads connections between them. A failure names `host` or `port`.
enum Listener {
    static func open(on base: OpaquePointer, host: String, port: Int) throws(ConfigurationError) -> (listener: OpaquePointer, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw ConfigurationError(field: "host", message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(results) }
        let flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_EXEC
        guard let listener = evconnlistener_new_bind(base, nil, nil, flags, 1024, first.pointee.ai_addr, Int32(first.pointee.ai_addrlen)) else {
            throw ConfigurationError(field: "port", message: "cannot listen on \(host):\(port): \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(evconnlistener_get_fd(listener), $0, &length) }
        }
        guard bound == 0 else {
            evconnlistener_free(listener)
            throw ConfigurationError(field: "port", message: "cannot read the bound port: \(String(cString: strerror(errno)))")
        }
        let family = Int32(address.ss_family)
        let boundPort = withUnsafePointer(to: &address) { pointer -> Int in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        return (listener, boundPort)
    }
}
