/// What the back end found when it checked the code the user typed.
public enum VerificationOutcome: String, Sendable, CaseIterable {
    /// The right code.
    case verified
    /// A wrong code: it counts toward the code's lock.
    case failed
}

/// The gate's answer to a reported verification.
public struct VerificationReport: Hashable, Sendable {
    /// The canonical number (E.164).
    public var phone: String
    public var purpose: String
    public var outcome: VerificationOutcome
    /// After `failed`: wrong codes the code may still have; nil after `verified` or without
    /// a lockout.
    public var attemptsLeft: Int?
}
