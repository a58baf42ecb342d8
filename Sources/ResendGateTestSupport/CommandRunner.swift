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

/// Runs an executable to completion, for end-to-end tests of the command line: a
/// `ServerProcess` (its environment rules, its output through temp files) waited for.
public enum CommandRunner {
    /// Runs `executable` with `arguments`, feeding it `input`, and returns its exit status and
    /// output. Past `timeout` it gets SIGTERM, then SIGKILL 2 s later, and `timedOut` is true.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        input: String? = nil,
        timeout: Duration = .seconds(30)
    ) throws -> CommandResult {
        let process = try ServerProcess(executable, arguments, environment: environment, input: input)
        if let finished = process.waitForExit(timeout: timeout) { return finished }
        var result = process.stop(grace: .seconds(2))
        result.timedOut = true
        return result
    }
}
