import ResendGate
import ResendGateServer

/// `resendgate check PHONE --code DIGITS`: check a typed code against the number's issued one.
enum CheckCommand {
    static let summary = """
        Check the code PHONE's user typed (--code) against the code the gate issued (a purpose with
        --issue-codes or issue_codes): right once, then used. A wrong one counts (the message says how many
        more the code may have); at --max-failed-checks the code is locked (code_locked), or with
        --lockout-scope number the number (locked). Exit 0 valid, 3 wrong, locked, expired, used or voided,
        2 bad input (codes_not_issued: the purpose's codes are the back end's), 1 store unavailable.
        """

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        guard let command = try NumberCommand.make(
            name: "check", arguments: arguments, environment: environment, summary: summary, extraOptions: Settings.perCheck)
        else { return .success }
        guard let code = command.settings.checkCode else { throw UsageError("check needs --code DIGITS, the code the user typed") }
        let check = try await command.gate.check(phone: command.phone, purpose: command.purpose, code: code)
        printJSON { check.writeJSON(to: &$0) }
        return .success
    }
}
