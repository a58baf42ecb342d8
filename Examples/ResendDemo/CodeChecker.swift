import Foundation
import ResendGateClient

/// What checking a typed code came to.
public enum CodeCheck: Equatable, Sendable {
    case verified
    /// Wrong; `attemptsLeft` more may be tried on this code.
    case wrong(attemptsLeft: Int?)
    /// This code may not be tried again: ask for a new one.
    case codeLocked
    /// No code was sent to the number (or it expired): ask for one.
    case noCode
}

/// The app's back end as the sign-in screen sees it: it checks the code the user typed.
public protocol CodeChecking: Sendable {
    func check(phone: String, purpose: String, code: String) async throws -> CodeCheck
}

/// A stand-in for the app's back end, in process: it knows the code its SMS provider sent
/// (here one fixed code), checks the typed one, and reports the outcome to the gate with
/// the kit's types, as a real back end does after its own check (docs/clients.md).
public struct DemoCodeChecker: CodeChecking {
    /// The gate, as the back end reaches it (with its API key, `verify` scope).
    public let gate: ResendGateClient
    /// The code the demo's "SMS provider" sends every time.
    public let sentCode: String

    public init(gate: ResendGateClient, sentCode: String = "123456") {
        self.gate = gate
        self.sentCode = sentCode
    }

    public func check(phone: String, purpose: String, code: String) async throws -> CodeCheck {
        let outcome: VerificationOutcome = code == sentCode ? .verified : .failed
        let report: VerificationReport
        do {
            report = try await gate.reportVerification(phone: phone, purpose: purpose, outcome: outcome)
        } catch {
            switch error.code {
            case "code_locked", "locked": return .codeLocked
            case "no_code_sent": return .noCode
            default: throw error
            }
        }
        return outcome == .verified ? .verified : .wrong(attemptsLeft: report.attemptsLeft)
    }
}
