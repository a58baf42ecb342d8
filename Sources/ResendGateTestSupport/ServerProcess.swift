import Foundation
import Synchronization

/// An executable under test, for example `resendgate serve`: start it, wait for a line in
/// its output, signal it, stop it and read what it printed (`CommandRunner` runs one to its end).
///
/// The child gets our environment less every `RESENDGATE_*` variable, plus `environment`.
/// Output is kept in a temp folder that is removed by `stop()`.
public final class ServerProcess: Sendable {
    private let child: ChildProcess
    private let folder: String
    private let stopped = Mutex<CommandResult?>(nil)
    private let started = ContinuousClock.now

    /// Launches `executable` without waiting for anything; it reads `input`, if given, on
    /// standard input.
    public init(_ executable: String, _ arguments: [String] = [], environment: [String: String] = [:], input: String? = nil) throws {
        let folder = try TemporaryDirectory.make(prefix: "resendgate-process-")
        do {
            if let input { try Data(input.utf8).write(to: URL(fileURLWithPath: folder + "/stdin")) }
            child = try ChildProcess(
                executable: executable, arguments: arguments, environment: environment,
                inputPath: input == nil ? nil : folder + "/stdin", outputPath: folder + "/stdout", errorPath: folder + "/stderr")
        } catch {
            TemporaryDirectory.remove(folder)
            throw error
        }
        self.folder = folder
    }

    deinit {
        stop()
    }

    /// The process id.
    public var pid: Int32 { child.pid }

    /// Whether it is still running.
    public var isRunning: Bool { child.exitStatus == nil }

    /// What it has written to standard output so far.
    public var stdout: String { stopped.withLock { $0?.stdout } ?? readText(folder + "/stdout") }

    /// What it has written to standard error so far.
    public var stderr: String { stopped.withLock { $0?.stderr } ?? readText(folder + "/stderr") }

    /// Waits for a line containing `text`; with `beyond`, for one more such line than the
    /// `beyond` already printed (`lines(containing:)` before the act), so that a line printed
    /// earlier for another reason (a first connect that failed on a loaded machine) is not
    /// taken for the act's. Throws `.timeout` past `timeout`, or `.didNotStart` if the process
    /// exits first; both carry the output.
    public func waitForLine(containing text: String, beyond: Int = 0, timeout: Duration = .seconds(10)) throws -> String {
        try waitForLine(beyond: beyond, timeout: timeout) { $0.contains(text) }
    }

    /// Waits for the line after the first `beyond` (stdout's, then stderr's) for which `matches` is true.
    private func waitForLine(beyond: Int, timeout: Duration, where matches: (Substring) -> Bool) throws -> String {
        let deadline = PatientDeadline(timeout)  // a frozen test process is given its time
        while true {
            let exited = child.exitStatus
            let found = outputLines.filter(matches)
            if found.count > beyond { return String(found[beyond]) }
            if let exited {
                throw TestSupportError.didNotStart.with("the process exited (\(exited)) first\n\(outputSummary)")
            }
            guard deadline.hasTimeLeft else {
                throw TestSupportError.timeout.with("no matching output line within \(timeout)\n\(outputSummary)")
            }
            pauseBriefly()
        }
    }

    /// The lines printed so far that contain `text`.
    public func lines(containing text: String) -> [Substring] {
        outputLines.filter { $0.contains(text) }
    }

    private var outputLines: [Substring] { (stdout + "\n" + stderr).split(separator: "\n") }

    /// Waits for a line announcing `http://HOST:PORT` (how a server started on port 0 tells its real
    /// port) and returns the port.
    public func waitForListeningPort(timeout: Duration = .seconds(10)) throws -> Int {
        let line = try waitForLine(beyond: 0, timeout: timeout) { Self.port(in: $0) != nil }
        return Self.port(in: Substring(line))!
    }

    static func port(in line: Substring) -> Int? {
        guard let scheme = line.range(of: "http://") else { return nil }
        let authority = line[scheme.upperBound...].prefix { !$0.isWhitespace && $0 != "/" }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        return Int(authority[authority.index(after: colon)...])
    }

    /// Sends a signal (SIGTERM, SIGINT, SIGHUP...) if it still runs.
    public func signal(_ signal: Int32) {
        child.send(signal)
    }

    /// Waits for it to exit on its own; nil if it still runs after `timeout`.
    public func waitForExit(timeout: Duration = .seconds(10)) -> CommandResult? {
        guard child.waitForExit(timeout: timeout) != nil else { return nil }
        return stop()
    }

    /// Stops it (SIGTERM, then SIGKILL after `grace`), removes its output folder and returns its
    /// exit status and output. Idempotent: later calls return the same result.
    @discardableResult
    public func stop(grace: Duration = .seconds(10)) -> CommandResult {
        stopped.withLock { result in
            if let result { return result }
            let status = child.terminate(grace: grace) ?? .signaled(SIGKILL)
            let finished = CommandResult(
                status: status, stdout: readText(folder + "/stdout"), stderr: readText(folder + "/stderr"),
                timedOut: false, duration: ContinuousClock.now - started)
            TemporaryDirectory.remove(folder)
            result = finished
            return finished
        }
    }

    private var outputSummary: String {
        "--- stdout (tail) ---\n\(tail(stdout, lines: 20))\n--- stderr (tail) ---\n\(tail(stderr, lines: 20))"
    }
}
