import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP server that answers each connection with the next scripted reply, for
/// event streams a real gate would not send (a restart's `shutdown`, a `done` with a
/// reason, a hostile endless line). Records when each connection arrived.
final class ScriptedEventServer: @unchecked Sendable {
    // @unchecked: `arrivals` and `closedAt` are guarded by `lock`; the rest is immutable.
    /// What to do with one connection after reading its request.
    struct Reply: Sendable {
        /// Bytes to write, in order.
        var chunks: [[UInt8]]
        /// Whether to close the connection afterwards (else it stays open until `stop`).
        var close: Bool
    }

    static let streamHeader = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\r\n".utf8)

    let port: Int
    private let listener: Int32
    private let replies: [Reply]
    private let lock = NSLock()
    private var arrivals: [ContinuousClock.Instant] = []
    private var closedAt: [ContinuousClock.Instant] = []
    private var open: [Int32] = []

    init(_ replies: [Reply]) throws {
        self.replies = replies
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// When each connection arrived, and when each closing reply was written and closed.
    var timeline: (arrivals: [ContinuousClock.Instant], closes: [ContinuousClock.Instant]) {
        lock.withLock { (arrivals, closedAt) }
    }

    func stop() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in lock.withLock({ open }) { close(fd) }
    }

    private func serve() {
        var index = 0
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            lock.withLock {
                arrivals.append(.now)
                open.append(connection)
            }
            readRequest(connection)
            let reply = index < replies.count ? replies[index] : Reply(chunks: [Array("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n".utf8)], close: true)
            index += 1
            for chunk in reply.chunks {
                _ = chunk.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            if reply.close {
                lock.withLock { closedAt.append(.now) }
                Glibc.shutdown(connection, Int32(SHUT_RDWR))
            }
        }
    }

    private func readRequest(_ connection: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !received.ends(with: Array("\r\n\r\n".utf8)), received.count < 65_536 {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            received += buffer[0..<count]
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
