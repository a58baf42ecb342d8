/// What the back end found when it checked a code the user typed.
public enum VerificationOutcome: String, Sendable, CaseIterable {
    /// The right code: clears the number's wrong codes.
    case verified
    /// A wrong code: counts toward the lockout (`Policy.maxFailedChecks`).
    case failed
}

/// What a reported verification did.
public struct VerificationResult: Sendable, Equatable {
    public let outcome: VerificationOutcome
    public let phone: PhoneNumber
    public let purpose: Purpose
    /// After a `failed`: wrong codes still allowed before the number is locked; nil after
    /// `verified`, for a test number, or when the policy has no lockout.
    public let attemptsLeft: Int?
}
