import Foundation
import ResendGate
import ResendGateClient

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
        let client = ResendGateClient(baseURL: try serverURL(settings.watchServer))
        let chinese = (settings.language ?? environment["LANG"] ?? "").lowercased().hasPrefix("zh")
        var display = WatchDisplay(isTerminal: isatty(STDOUT_FILENO) != 0, chinese: chinese)
        return await WatchSession(client: client, token: token.text).run(&display)
    }

    /// `--server`: an `http://host[:port][/base]` URL.
    static func serverURL(_ text: String) throws -> URL {
        guard text.hasPrefix("http://"), let url = URL(string: text), url.host?.isEmpty == false else {
            throw UsageError("--server must be an http://host[:port] URL, got \"\(text)\"")
        }
        return url
    }
}
