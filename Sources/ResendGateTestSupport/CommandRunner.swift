import Foundation

/// What a finished command did.
public struct CommandResult: Sendable, CustomStringConvertible {
    /// How it ended.
    public var status: ExitStatus
    /// Everything it wrote to standard output.
    public var stdout: String
    /// Everything it wrote to standard error.
    public var stderr: String
    /// Whether it ran past its timeout and was terminated.
    public var timedOut: Bool
    /// How long it ran.
    public var duration: Duration

    /// The exit code, or 128 + the signal that ended it.
    public var exitCode: Int32 { status.code }

    public var description: String {
        "\(status)\(timedOut ? " (timed out)" : "") after \(duration)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
    }
}

/// Runs an executable to completion, for end-to-end tests of the command line.
///
/// The child gets our environment minus every `RESENDGATE_*` variable (a developer's shell
/// must not change a test's outcome), plus `environment`. Output goes through temp files,
/// so a chatty child cannot block on a full pipe.
public enum CommandRunner {
    /// Runs `executable` with `arguments`, feeding it `input`, and returns its exit status and
    /// output. Past `timeout` it gets SIGTERM, then SIGKILL 2 s later, and `timedOut` is true.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        inheritEnvironment: Bool = true,
        input: String? = nil,
        workingDirectory: String? = nil,
        timeout: Duration = .seconds(30)
    ) throws -> CommandResult {
        let folder = try TemporaryDirectory.make(prefix: "resendgate-run-")
        defer { TemporaryDirectory.remove(folder) }
        var standardInput: FileHandle?
        if let input {
            let inputPath = folder + "/stdin"
            try Data(input.utf8).write(to: URL(fileURLWithPath: inputPath))
            standardInput = FileHandle(forReadingAtPath: inputPath)
        }
        let stdout = try outputFile(folder + "/stdout")
        let stderr = try outputFile(folder + "/stderr")
        let started = ContinuousClock.now
        let child = try ChildProcess(
            executable: executable, arguments: arguments,
            environment: childEnvironment(inherit: inheritEnvironment, extra: environment),
            workingDirectory: workingDirectory, standardInput: standardInput, standardOutput: stdout,
            standardError: stderr)
        try? stdout.close()
        try? stderr.close()
        try? standardInput?.close()

        var timedOut = false
        var status = child.waitForExit(timeout: timeout)
        if status == nil {
            timedOut = true
            status = child.terminate(grace: .seconds(2))
        }
        return CommandResult(
            status: status ?? .signaled(SIGKILL),
            stdout: readText(folder + "/stdout"),
            stderr: readText(folder + "/stderr"),
            timedOut: timedOut,
            duration: ContinuousClock.now - started)
    }
}
