/// Where the library tells its caller what happened to its Redis connections: reconnects,
/// Sentinel master switches, cluster slot re-maps and script reloads (`NOSCRIPT`). The
/// library never prints; it hands each line to the caller's `write` closure, which the
/// HTTP server points at its own log and the CLI at stderr.
///
/// A line never holds a phone number (nor a key, which may spell one): only addresses of
/// Redis nodes, script names and Redis's connection errors. A disabled level costs one
/// comparison: the message is an `@autoclosure`, built only when its level is on.
public struct GateLogger: Sendable {
    /// How much a line matters, least first.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case debug, info, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    /// The least level written; nil writes nothing.
    public let minimumLevel: Level?
    private let write: @Sendable (Level, String) -> Void

    /// Lines at `minimumLevel` and above go to `write`, on the thread of the event loop
    /// that logs them (a `GateWorker`'s loop; `Gate`'s own loop thread).
    public init(minimumLevel: Level, write: @escaping @Sendable (Level, String) -> Void) {
        self.minimumLevel = minimumLevel
        self.write = write
    }

    /// Writes nothing: the default of every initialiser that takes a logger.
    public static let off = GateLogger()

    private init() {
        minimumLevel = nil
        write = { _, _ in }
    }

    /// Whether lines at `level` are written.
    @inline(__always)
    public func isEnabled(_ level: Level) -> Bool {
        guard let minimumLevel else { return false }
        return level >= minimumLevel
    }

    /// Writes `message` if `level` is enabled; the text is not built otherwise.
    @inline(__always)
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        if isEnabled(level) { write(level, message()) }
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
