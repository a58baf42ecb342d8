import ResendGateServer

/// `resendgate send PHONE`: reserve a send straight against Redis.
enum SendCommand {
    static let summary = "Reserve a send to PHONE if its cooldown allows; prints the decision as JSON.\nExit 0 allowed, 3 denied (a limit, or a region or line type the policy refuses), 2 bad input, 1 store unavailable."

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        guard let command = try NumberCommand.make(
            name: "send", arguments: arguments, environment: environment, summary: summary, extraOptions: Settings.perSend)
        else { return .success }
        let decision = try await command.gate.reserve(
            phone: command.phone, purpose: command.purpose,
            clientIP: command.settings.clientIP, idempotencyKey: command.settings.idempotencyKey)
        // The command line is an operator's or a back end's: an issued code is shown.
        printJSON { decision.writeJSON(to: &$0, showingCode: true) }
        return decision.allowed ? .success : .denied
    }
}

/// `resendgate status PHONE`: peek at a cooldown; never consumes.
enum StatusCommand {
    static let summary = "Show PHONE's cooldown as JSON without consuming anything."

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        guard let command = try NumberCommand.make(name: "status", arguments: arguments, environment: environment, summary: summary)
        else { return .success }
        let status = try await command.gate.peek(phone: command.phone, purpose: command.purpose)
        printJSON { status.writeJSON(to: &$0) }
        return .success
    }
}

/// `resendgate release PHONE`: refund a send, so a code may be sent again at once.
enum ReleaseCommand {
    static let summary = """
        End PHONE's cooldown and refund its send (the SMS provider failed): at most --max-refunds per number
        and purpose in --window. Exit 0 refunded (or no cooldown ran: "released": false), 3 past the limit
        (refund_limit) or with --max-refunds 0 (forbidden), 2 bad input, 1 store unavailable.
        """

    static func run(_ arguments: [String], environment: [String: String]) async throws -> ExitCode {
        guard let command = try NumberCommand.make(name: "release", arguments: arguments, environment: environment, summary: summary)
        else { return .success }
        let released = try await command.gate.release(phone: command.phone, purpose: command.purpose)
        let phone = try command.gate.canonical(command.phone)
        printJSON { json in
            json.beginObject()
            json.field("phone", phone.e164)
            json.field("purpose", command.purpose)
            json.field("released", released)
            json.endObject()
        }
        return .success
    }
}
