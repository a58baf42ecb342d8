import Dispatch
import Foundation

/// How a child process ended.
public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// It called `exit(code)`.
    case exited(Int32)
    /// A signal ended it (`SIGKILL` is 9, `SIGTERM` 15).
    case signaled(Int32)

    /// The shell's convention: the exit code, or 128 + the signal number.
    public var code: Int32 {
        switch self {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signaled(let signal): "signal \(signal)"
        }
    }
}

/// A launched `Foundation.Process` whose exit can be awaited with a deadline.
/// `Process` reaps the child itself, so we never call `waitpid`; a latch opened by
/// `terminationHandler` tells us when it is gone.
final class ChildProcess: Sendable {
    private let process: Process
    private let exitLatch = DispatchSemaphore(value: 0)
    let pid: Int32

    /// Launches `executable` with our environment less every `RESENDGATE_*` variable (a
    /// developer's shell must not change a test's outcome), plus `environment`. It reads the
    /// file `inputPath` (else nothing) and writes to the file `outputPath` (created or
    /// truncated), its errors to `errorPath` or the same file: never to pipes, so a chatty
    /// child cannot fill a pipe buffer and stall.
    init(
        executable: String, arguments: [String], environment: [String: String] = [:], inputPath: String? = nil,
        outputPath: String, errorPath: String? = nil
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RESENDGATE_") }
            .merging(environment) { _, new in new }
        let output = try outputFile(outputPath)
        let errors = try errorPath.map(outputFile) ?? output
        let input = inputPath.flatMap(FileHandle.init(forReadingAtPath:))
        defer { [input, output, errors].forEach { try? $0?.close() } }
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        let latch = exitLatch
        process.terminationHandler = { _ in latch.signal() }
        do {
            try withDefaultSignalMask { try process.run() }
        } catch {
            throw TestSupportError.processFailed.with("cannot launch \(executable): \(error)")
        }
        self.process = process
        self.pid = process.processIdentifier
    }

    /// The exit status once the process has ended, else nil. Does not block.
    var exitStatus: ExitStatus? {
        waitForExit(timeout: .zero)
    }

    /// Waits until the process ends or `timeout` passes; nil if it is still running.
    @discardableResult
    func waitForExit(timeout: Duration) -> ExitStatus? {
        // In slices, charging only the time this process ran: a process frozen past
        // `timeout` (CI) may not have heard an exit that came meanwhile.
        let deadline = PatientDeadline(timeout)
        let slice = DispatchTimeInterval.nanoseconds(max(0, Int(min(timeout, .milliseconds(50)) / .nanoseconds(1))))
        while exitLatch.wait(timeout: .now() + slice) != .success {
            guard deadline.hasTimeLeft else { return nil }
        }
        exitLatch.signal()  // keep the latch open for later callers
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal ? .signaled(status) : .exited(status)
    }

    /// Sends `signal` if the process is still running (a reaped pid may belong to someone else).
    func send(_ signal: Int32) {
        if exitStatus == nil { _ = kill(pid, signal) }
    }

    /// SIGTERM (and SIGCONT, in case it is stopped), wait up to `grace`, then SIGKILL.
    /// Returns the exit status, or nil if even SIGKILL did not end it within 10 s.
    @discardableResult
    func terminate(grace: Duration) -> ExitStatus? {
        send(SIGTERM)
        send(SIGCONT)
        if let status = waitForExit(timeout: grace) { return status }
        send(SIGKILL)
        return waitForExit(timeout: .seconds(10))
    }
}

// MARK: - Signals

/// Runs `body` with no signal blocked on this thread. `posix_spawn` hands the calling
/// thread's signal mask to the child, and Dispatch and test-runner threads block signals
/// such as SIGTERM: a child started from them would ignore `terminate()` until SIGKILL.
private func withDefaultSignalMask<T>(_ body: () throws -> T) rethrows -> T {
    var empty = sigset_t()
    var previous = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}

// MARK: - Files

enum TemporaryDirectory {
    /// A fresh, private directory under the system temp folder (`mkdtemp`).
    static func make(prefix: String) throws -> String {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/\(prefix)XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw TestSupportError.processFailed.with("mkdtemp in \(base): \(errnoText())") }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Opens (creating or truncating) a file for a child's output.
private func outputFile(_ path: String) throws -> FileHandle {
    guard FileManager.default.createFile(atPath: path, contents: nil),
        let handle = FileHandle(forWritingAtPath: path)
    else { throw TestSupportError.processFailed.with("cannot create \(path)") }
    return handle
}

/// The whole text of a file, or "" if it cannot be read.
func readText(_ path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

func tail(_ text: String, lines count: Int) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
}

/// Blocks the calling thread for `duration`: a poll's pause, or `migrateSlot`'s between steps.
func pauseBriefly(_ duration: Duration = .milliseconds(10)) {
    usleep(UInt32(max(1, duration / .microseconds(1))))
}
