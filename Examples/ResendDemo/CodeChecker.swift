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
/// Other failures (offline, a used or voided code, the back end down) are thrown as a
/// ``ResendGateClient/ResendGateError``, which the screen shows.
public protocol CodeChecking: Sendable {
    func check(phone: String, purpose: String, code: String) async throws(ResendGateError) -> CodeCheck
}

extension CodeCheck {
    /// The outcome an error of a check means, if it is one (a wrong, locked or expired code).
    init?(_ error: ResendGateError) {
        switch error.code {
        case ResendGateError.wrongCode: self = .wrong(attemptsLeft: error.attemptsLeft)
        case ResendGateError.codeLocked, ResendGateError.locked: self = .codeLocked
        case ResendGateError.noCodeSent, ResendGateError.codeExpired: self = .noCode
        default: return nil
        }
    }
}

/// The app's side of issued codes: the back end proxies `POST /v1/checks` (the gate issued
/// the code, the back end sent it by SMS), and the app asks through the kit's
/// ``ResendGateClient/ResendGateClient/check(phone:purpose:code:)``.
public struct BackEndCodeChecker: CodeChecking {
    /// The app's back end.
    public let backEnd: ResendGateClient

    public init(backEnd: ResendGateClient) { self.backEnd = backEnd }

    public func check(phone: String, purpose: String, code: String) async throws(ResendGateError) -> CodeCheck {
        do {
            _ = try await backEnd.check(phone: phone, purpose: purpose, code: code)
            return .verified
        } catch {
            if let outcome = CodeCheck(error) { return outcome }
            throw error
        }
    }
}

/// A stand-in for a back end that sends its own codes, in process: it knows the code its SMS
/// provider sent (here one fixed code), checks the typed one, and reports the outcome to the
/// gate with the kit's types (`POST /v1/verifications`), as such a back end does after its
/// own check (docs/clients.md).
public struct DemoCodeChecker: CodeChecking {
    /// The gate, as the back end reaches it (with its API key, `verify` scope).
    public let gate: ResendGateClient
    /// The code the demo's "SMS provider" sends every time.
    public let sentCode: String

    public init(gate: ResendGateClient, sentCode: String = "123456") {
        self.gate = gate
        self.sentCode = sentCode
    }

    public func check(phone: String, purpose: String, code: String) async throws(ResendGateError) -> CodeCheck {
        let outcome: VerificationOutcome = code == sentCode ? .verified : .failed
        let report: VerificationReport
        do {
            report = try await gate.reportVerification(phone: phone, purpose: purpose, outcome: outcome)
        } catch {
            if let outcome = CodeCheck(error) { return outcome }
            throw error
        }
        return outcome == .verified ? .verified : .wrong(attemptsLeft: report.attemptsLeft)
    }
}
