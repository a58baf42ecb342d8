import ResendGate
import ResendGateServer

/// `resendgate verified PHONE` and `resendgate failed PHONE`: report a checked code.
enum VerifyCommand {
    static func summary(_ outcome: VerificationOutcome) -> String {
        switch outcome {
        case .verified:
            """
            Report that PHONE typed the right code: its wrong checks are cleared. Exit 0, 3 while the
            code or the number is locked (code_locked, locked), 2 bad input, 1 store unavailable.
            """
        case .failed:
            """
            Report that PHONE typed a wrong code: it counts against the last code sent to the number
            (none in --window: no_code_sent, exit 2, nothing counted); at --max-failed-checks the code is
            locked (code_locked), or with --lockout-scope number the number for --lockout (locked). Prints
            the attempts left. Exit 0, 3 when this locked the code or the number or it was locked, 2 bad
            input, 1 store unavailable.
            """
        }
    }

    static func run(_ outcome: VerificationOutcome, _ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        guard let command = try NumberCommand.make(
            name: outcome.rawValue, arguments: arguments, environment: environment, summary: summary(outcome))
        else { return .success }
        let result = try await command.gate.verify(phone: command.phone, purpose: command.purpose, outcome: outcome)
        printJSON { result.writeJSON(to: &$0) }
        return .success
    }
}
