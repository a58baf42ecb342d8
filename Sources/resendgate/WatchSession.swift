import Foundation
import ResendGateClient

/// One watch on the client kit's event stream (`ResendGateClient.countdownEvents`, the
/// follower the apps use): a first reading, then the ticks until `done`.
struct WatchSession {
    let client: ResendGateClient
    let token: String
    /// Connections in a row that may fail while the countdown is followed (a gate
    /// restarting) before the watch gives up.
    static let maximumFailures = 3

    func run(_ display: inout WatchDisplay) async -> ExitCode {
        // One reading first, so that an unreachable server or an unknown token is told at once.
        do {
            _ = try await client.countdown(token: token)
        } catch {
            if error.code == ResendGateError.notFound {
                printError("unknown or expired countdown token")
                return .badInput
            }
            printError("cannot connect to the server at \(client.baseURL.absoluteString): \(error.message)")
            return .storeUnavailable
        }
        do {
            for try await update in client.countdownEvents(token: token, maximumFailures: Self.maximumFailures) {
                switch update {
                case .tick(let tick): display.show(seconds: tick.retryAfter)
                case .done: break
                }
            }
            display.showDone()
            return .success
        } catch {
            if display.isTerminal { FileHandle.standardOutput.write(Data("\n".utf8)) }
            let reason = (error as? ResendGateError)?.message ?? "\(error)"
            printError("cannot follow the countdown at \(client.baseURL.absoluteString): \(reason)")
            return .storeUnavailable
        }
    }
}
