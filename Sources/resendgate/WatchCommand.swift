import Countdown
import Foundation
import ResendGate

/// `resendgate watch TOKEN`: a terminal thin client of `GET /v1/countdowns/{token}/events`.
/// It renders the server's ticks ("Resend in 42s"), redrawn in place on a terminal and
/// one line per change otherwise, and never keeps time of its own.
enum WatchCommand {
    static let summary = """
        Show "Resend in 42s" for a countdown token (from POST /v1/sends), redrawn in place, until a resend may go ahead.
        Exit 0 when it may, 1 when the server cannot be reached, 2 for a malformed, unknown or expired token.
        """

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        let reading = try CommandLineReading(arguments: arguments, environment: environment, options: Settings.watch)
        if reading.printHelpIfAsked(usage: "resendgate watch TOKEN [--server URL]", summary: summary) { return .success }
        let settings = try reading.settings()
        guard reading.positional.count == 1 else { throw UsageError("watch takes one countdown token") }
        guard let token = CountdownToken(validating: reading.positional[0]) else {
            printError("not a countdown token (44 to 128 characters of A-Z a-z 0-9 - _): \(reading.positional[0])")
            return .badInput
        }
        let server = try WatchServer(url: settings.watchServer)
        let chinese = (settings.language ?? environment["LANG"] ?? "").lowercased().hasPrefix("zh")
        var display = WatchDisplay(isTerminal: isatty(STDOUT_FILENO) != 0, chinese: chinese)
        return WatchSession(server: server, path: "/v1/countdowns/\(token.text)/events").run(&display)
    }
}

/// Where the server is: `http://host[:port][/base]`.
struct WatchServer {
    let host: String
    let port: String
    let basePath: String

    init(url: String) throws {
        guard url.hasPrefix("http://") else {
            throw UsageError("--server must be an http:// URL, got \"\(url)\"")
        }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        basePath = String(rest.dropFirst(authority.count)).trimmingSuffix("/")
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? String(after.dropFirst()) : "80"
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        } else {
            host = String(authority)
            port = "80"
        }
        guard !host.isEmpty, let number = Int(port), (1...65535).contains(number) else {
            throw UsageError("--server: cannot read host and port from \"\(url)\"")
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}

/// What the terminal shows.
struct WatchDisplay {
    let isTerminal: Bool
    let strings: CountdownStrings
    let doneText: String
    private var last: String?

    init(isTerminal: Bool, chinese: Bool) {
        self.isTerminal = isTerminal
        strings = chinese ? .chinese : .english
        doneText = chinese ? "现在可以重新发送" : "You can resend now"
    }

    mutating func show(seconds: Int64) {
        draw(CountdownValue(totalSeconds: seconds).resendPrompt(.seconds, strings: strings))
    }

    mutating func showDone() {
        draw(doneText)
        if isTerminal { write("\n") }
    }

    private mutating func draw(_ text: String) {
        guard text != last else { return }
        last = text
        write(isTerminal ? "\r\u{1B}[2K\(text)" : "\(text)\n")
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// One watch: connects, follows the stream, reconnects a few times if it drops early.
struct WatchSession {
    let server: WatchServer
    let path: String
    /// Longer than the server's 15 s heartbeat.
    static let silenceLimit = 40

    func run(_ display: inout WatchDisplay) -> ExitCode {
        var sawTick = false
        var failures = 0
        while true {
            let outcome = follow(&display, sawTick: &sawTick)
            switch outcome {
            case .done:
                display.showDone()
                return .success
            case .notFound where sawTick:
                // The cooldown ended or was released while we were away.
                display.showDone()
                return .success
            case .notFound:
                if display.isTerminal { FileHandle.standardOutput.write(Data("\n".utf8)) }
                printError("unknown or expired countdown token")
                return .badInput
            case .failed(let reason):
                failures += 1
                if failures > 3 || !sawTick {
                    if display.isTerminal && sawTick { FileHandle.standardOutput.write(Data("\n".utf8)) }
                    printError("cannot follow the countdown at \(server.host):\(server.port): \(reason)")
                    return .storeUnavailable
                }
                Thread.sleep(forTimeInterval: 1)
            }
        }
    }

    enum Outcome {
        case done
        case notFound
        case failed(String)
    }

    private func follow(_ display: inout WatchDisplay, sawTick: inout Bool) -> Outcome {
        let socket: WatchSocket
        do {
            socket = try WatchSocket(host: server.host, port: server.port, silenceLimit: Self.silenceLimit)
        } catch {
            return .failed("\(error)")
        }
        defer { socket.close() }
        let request = "GET \(server.basePath)\(path) HTTP/1.1\r\nHost: \(server.host):\(server.port)\r\n"
            + "Accept: text/event-stream\r\nCache-Control: no-store\r\n\r\n"
        guard socket.send(Array(request.utf8)) else { return .failed("the connection closed while sending") }
        var response = WatchResponse()
        while true {
            guard let bytes = socket.receive() else {
                return .failed(socket.lastError ?? "the server closed the stream before it was done")
            }
            response.feed(bytes)
            if let status = response.status, status != 200 {
                return status == 404 ? .notFound : .failed("HTTP \(status)")
            }
            while let event = response.nextEvent() {
                switch event.name {
                case "tick":
                    if let seconds = event.integer("retry_after") {
                        sawTick = true
                        display.show(seconds: seconds)
                    }
                case "done":
                    return .done
                default:
                    break
                }
            }
        }
    }
}

/// Parses the response as it arrives: status line, headers, chunked body, SSE events.
struct WatchResponse {
    struct Event {
        var name = "message"
        var data = ""

        func integer(_ field: String) -> Int64? {
            guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return nil }
            return (object[field] as? NSNumber)?.int64Value
        }
    }

    private(set) var status: Int?
    private var head: [UInt8] = []
    private var chunked = false
    private var pending: [UInt8] = []  // body bytes not yet de-chunked
    private var remainingInChunk = 0
    private var text: [UInt8] = []     // de-chunked event-stream text

    mutating func feed(_ bytes: [UInt8]) {
        if status == nil {
            head += bytes
            guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            let lines = String(decoding: head[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let parts = lines[0].split(separator: " ")
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            chunked = lines.dropFirst().contains {
                $0.lowercased().hasPrefix("transfer-encoding:") && $0.lowercased().contains("chunked")
            }
            pending = Array(head[end.upperBound...])
            head = []
        } else {
            pending += bytes
        }
        if chunked { dechunk() } else { text += pending; pending = [] }
    }

    private mutating func dechunk() {
        while !pending.isEmpty {
            if remainingInChunk > 0 {
                let take = min(remainingInChunk, pending.count)
                text += pending[..<take]
                pending.removeFirst(take)
                remainingInChunk -= take
                if remainingInChunk == 0 { remainingInChunk = -2 }  // then its CRLF
                continue
            }
            if remainingInChunk == -2 {
                guard pending.count >= 2 else { return }
                pending.removeFirst(2)
                remainingInChunk = 0
                continue
            }
            guard let lineEnd = pending.firstRange(of: Array("\r\n".utf8)) else { return }
            let sizeText = String(decoding: pending[..<lineEnd.lowerBound], as: UTF8.self)
            let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) ?? 0
            pending.removeFirst(lineEnd.upperBound)
            if size == 0 { pending = []; return }
            remainingInChunk = size
        }
    }

    /// The next complete event (comments skipped), if one has arrived.
    mutating func nextEvent() -> Event? {
        while let end = text.firstRange(of: Array("\n\n".utf8)) {
            let block = String(decoding: text[..<end.lowerBound], as: UTF8.self)
            text.removeFirst(end.upperBound)
            var event = Event()
            var hasField = false
            for line in block.split(separator: "\n") where !line.hasPrefix(":") {
                hasField = true
                if line.hasPrefix("event:") { event.name = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("data:") { event.data += line.dropFirst(5).trimmingCharacters(in: .whitespaces) }
            }
            if hasField { return event }
        }
        return nil
    }
}

/// A blocking TCP connection with a silence limit on reads.
final class WatchSocket {
    private var fd: Int32 = -1
    private(set) var lastError: String?

    init(host: String, port: String, silenceLimit: Int) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, port, &hints, &list)
        guard resolved == 0, let first = list else {
            throw UsageError("cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            let candidate = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if candidate >= 0 {
                if connect(candidate, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                    fd = candidate
                    break
                }
                reason = String(cString: strerror(errno))
                Glibc.close(candidate)
            }
            entry = current.pointee.ai_next
        }
        guard fd >= 0 else { throw UsageError("cannot connect to \(host):\(port): \(reason)") }
        var timeout = timeval(tv_sec: silenceLimit, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// The next bytes; nil at the end of the stream, on an error or after the silence limit.
    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(buffer[..<count]) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                lastError = errno == EAGAIN || errno == EWOULDBLOCK ? "no event or heartbeat for a long time" : String(cString: strerror(errno))
            }
            return nil
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}
