/// The answer to ``ResendGateClient/check(phone:purpose:code:)`` when the code is right
/// (valid once). A wrong, expired, used, voided or locked code is a ``ResendGateError``
/// instead: ``ResendGateError/wrongCode`` (with ``ResendGateError/attemptsLeft``),
/// ``ResendGateError/codeLocked`` or ``ResendGateError/locked`` (with
/// ``ResendGateError/retryAfter``), ``ResendGateError/codeExpired``,
/// ``ResendGateError/codeUsed``, ``ResendGateError/codeVoided``,
/// ``ResendGateError/codesNotIssued``.
public struct CodeCheckResult: Hashable, Sendable {
    /// The canonical number (E.164).
    public var phone: String
    /// The purpose the code was for.
    public var purpose: String

    /// Makes a result.
    public init(phone: String, purpose: String) {
        self.phone = phone
        self.purpose = purpose
    }
}
