import Foundation
import GateRuntime

/// One line per request on stderr, buffered per worker and written in batches,
/// so logging costs a memory copy on the hot path, not a system call.
final class AccessLog {
    private let level: LogLevel
    private var buffer: [UInt8] = []
    private let flushThreshold = 32 * 1024
    /// At most one warning line per worker and cause (failed accepts, shed connections)
    /// this often, however often it recurs.
    static let reportInterval: Duration = .seconds(5)

    init(level: LogLevel) {
        self.level = level
        buffer.reserveCapacity(flushThreshold * 2)
    }

    func enabled(_ wanted: LogLevel) -> Bool { level <= wanted && level != .off }

    /// `method path status duration id`, the path `redacted`.
    func request(method: String, path: Substring, status: Int, duration: Duration, id: UInt64) {
        guard enabled(.info) else { return }
        let micros = Int(duration / .microseconds(1))
        let line = "level=info method=\(method) path=\(Self.redacted(path)) status=\(status) duration_us=\(micros) request_id=\(String(id, radix: 16))\n"
        buffer.append(contentsOf: line.utf8)
        if buffer.count >= flushThreshold { flush() }
    }

    func message(_ wanted: LogLevel, _ text: String) {
        guard enabled(wanted) else { return }
        buffer.append(contentsOf: "level=\(wanted.rawValue) msg=\"\(text)\"\n".utf8)
        flush()
    }

    /// Worker `index`'s `GateWorker`'s logger, at this log's level; it runs on the
    /// worker's loop, which owns this log.
    func gateLogger(worker index: Int) -> GateLogger {
        // The two enums name their levels alike; `off` has no `GateLogger` level.
        guard let minimum = GateLogger.Level.allCases.first(where: { $0.description == level.rawValue }) else { return .off }
        nonisolated(unsafe) let log = self
        return GateLogger(minimumLevel: minimum) { level, text in
            log.message(LogLevel(rawValue: level.description)!, "worker \(index): \(text)")
        }
    }

    /// Writes what is buffered; called on a short timer and at shutdown.
    func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Replaces the number in `/v1/cooldowns/{phone}` and the token in
    /// `/v1/countdowns/{token}`: a log must not hand out numbers or live tokens.
    static func redacted(_ path: Substring) -> Substring {
        if path.hasPrefix("/v1/cooldowns/") { return "/v1/cooldowns/{phone}" }
        if path.hasPrefix("/v1/countdowns/") {
            return path.hasSuffix("/events") ? "/v1/countdowns/{token}/events" : "/v1/countdowns/{token}"
        }
        return path.prefix(256)
    }
}
