import RedisClient

/// Why the gate could not decide, made only through the named members below; `code` is
/// the stable wire code. `kind` is exhaustive on purpose: the server's status and the CLI's
/// exit code are `switch`es on it, so a new case does not build until it has both.
public struct GateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every way a gate call fails; the raw value is the wire code.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case invalidPhone = "invalid_phone"
        case invalidPurpose = "invalid_purpose"
        case invalidField = "invalid_field"
        case regionNotAllowed = "region_not_allowed"
        case numberTypeNotAllowed = "number_type_not_allowed"
        case idempotencyKeyReused = "idempotency_key_reused"
        case refundLimit = "refund_limit"
        /// Too many wrong codes: the number is locked until the lockout ends (nothing,
        /// not a verification or a refund, changes that).
        case locked
        /// A `failed` outcome for a number sent no code in the window: nothing was counted.
        case noCodeSent = "no_code_sent"
        /// The code had its wrong checks (lockout scope `code`); the number may get a new one.
        case codeLocked = "code_locked"
        /// A checked code is not the number's live issued code: one wrong check counted.
        case wrongCode = "wrong_code"
        /// The number has no live issued code: it expired, or none was issued.
        case codeExpired = "code_expired"
        /// The issued code was already checked right once: it may not be used again.
        case codeUsed = "code_used"
        /// The issued code was voided by a refund (its SMS failed).
        case codeVoided = "code_voided"
        /// A check for a purpose whose codes the back end makes (`Policy.codes` is off).
        case codesNotIssued = "codes_not_issued"
        /// An outcome report for a purpose whose codes the gate issues and checks itself.
        case codesIssued = "codes_issued"
        case forbidden
        case storeUnavailable = "store_unavailable"
        /// Redis may evict keys (`maxmemory-policy` is not `noeviction`) and so forget
        /// cooldowns: nothing is decided until it keeps them, unless `--allow-evicting-redis`.
        case storeEvictsKeys = "store_evicts_keys"
    }

    /// What went wrong, for a `switch`.
    public let kind: Kind
    /// A sentence for people: what went wrong and, where it helps, what to do.
    public let message: String
    /// For `invalid_phone`: the precise reason.
    public let phoneError: PhoneNumberError?
    /// For `wrong_code`: how many more wrong checks the code may have.
    public let attemptsLeft: Int?
    /// Milliseconds until the oldest refund leaves the window (`refund_limit`), the lockout
    /// ends (`locked`) or the number may get a new code (`code_locked`; 0: now).
    public let retryAfterMilliseconds: Int64?

    private init(
        _ kind: Kind, _ message: String, phoneError: PhoneNumberError? = nil, retryAfterMilliseconds: Int64? = nil, attemptsLeft: Int? = nil
    ) {
        self.attemptsLeft = attemptsLeft
        self.kind = kind
        self.message = message
        self.phoneError = phoneError
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// The stable wire code (`invalid_phone`, `store_unavailable`, ...): `kind.rawValue`.
    public var code: String { kind.rawValue }

    /// True when the input was wrong or a policy refused it (a 4xx, CLI exit 2 or 3),
    /// false when the store failed (a 5xx, CLI exit 1).
    public var isBadInput: Bool {
        switch kind {
        case .storeUnavailable, .storeEvictsKeys: false
        case .invalidPhone, .invalidPurpose, .invalidField, .regionNotAllowed, .numberTypeNotAllowed,
             .idempotencyKeyReused, .refundLimit, .locked, .noCodeSent, .codeLocked, .forbidden, .wrongCode, .codeExpired,
             .codeUsed, .codeVoided, .codesNotIssued, .codesIssued: true
        }
    }

    /// True when a policy refuses the number (its region or line type), a refund or a
    /// checked code: a denial, not a mistake in the request.
    public var isPolicyDenial: Bool {
        switch kind {
        case .regionNotAllowed, .numberTypeNotAllowed, .refundLimit, .locked, .codeLocked, .forbidden, .wrongCode, .codeExpired,
             .codeUsed, .codeVoided: true
        case .noCodeSent, .invalidPhone, .invalidPurpose, .invalidField, .idempotencyKeyReused, .storeUnavailable,
             .codesNotIssued, .codesIssued, .storeEvictsKeys: false
        }
    }

    public var description: String { message }

    public static func invalidPhone(_ reason: PhoneNumberError) -> GateError {
        GateError(.invalidPhone, reason.description, phoneError: reason)
    }

    public static func invalidPurpose(_ message: String) -> GateError {
        GateError(.invalidPurpose, message)
    }

    /// A purpose the gate is not configured for: refused before Redis, so made-up purposes
    /// get no limits of their own.
    public static func unconfiguredPurpose(_ purpose: Purpose) -> GateError {
        GateError(.invalidPurpose, "\"\(purpose.name)\" is not a configured purpose (see --purposes and --policy)")
    }

    public static func invalidField(_ message: String) -> GateError {
        GateError(.invalidField, message)
    }

    public static func regionNotAllowed(_ region: String) -> GateError {
        GateError(.regionNotAllowed, "codes may not be sent to numbers of region \(region) under this purpose's policy")
    }

    public static func numberTypeNotAllowed(_ type: PhoneNumberType) -> GateError {
        GateError(.numberTypeNotAllowed, "codes may not be sent to \(type.rawValue) numbers under this purpose's policy")
    }

    public static let idempotencyKeyReused = GateError(
        .idempotencyKeyReused, "this Idempotency-Key was already used with a different request")

    public static func refundLimit(retryAfterMilliseconds: Int64, maxRefunds: Int) -> GateError {
        GateError(
            .refundLimit,
            "this number had its \(maxRefunds) refund\(maxRefunds == 1 ? "" : "s") in the window; its cooldown keeps running",
            retryAfterMilliseconds: retryAfterMilliseconds)
    }

    public static func locked(retryAfterMilliseconds: Int64) -> GateError {
        GateError(
            .locked, "too many wrong codes were checked for this number: it is locked until the lockout ends",
            retryAfterMilliseconds: retryAfterMilliseconds)
    }

    /// Not counted: wrong codes reported for a number nobody asked a code for lock nothing.
    public static let noCodeSent = GateError(
        .noCodeSent, "no code was sent to this number for this purpose in the window: the failed check was not counted")

    public static func codeLocked(retryAfterMilliseconds: Int64, maxFailedChecks: Int) -> GateError {
        GateError(
            .codeLocked,
            "this code had \(maxFailedChecks) wrong check\(maxFailedChecks == 1 ? "" : "s"): it may not be checked again; send a new code",
            retryAfterMilliseconds: retryAfterMilliseconds)
    }

    public static func wrongCode(attemptsLeft: Int) -> GateError {
        GateError(
            .wrongCode, "this is not the code that was sent: \(attemptsLeft) more wrong check\(attemptsLeft == 1 ? "" : "s") and the code is locked",
            attemptsLeft: attemptsLeft)
    }

    public static let codeExpired = GateError(
        .codeExpired, "no live code for this number and purpose: it expired, or none was sent; send a new code")
    public static let codeUsed = GateError(.codeUsed, "this code was already used: each code is valid once; send a new code")
    public static let codeVoided = GateError(
        .codeVoided, "this code was voided by a refund (its SMS was not sent); send a new code")
    public static let codesNotIssued = GateError(
        .codesNotIssued, "this purpose's codes are made and checked by the back end, not the gate: report outcomes to POST /v1/verifications")
    public static let codesIssued = GateError(
        .codesIssued, "the gate issues and checks this purpose's codes itself: check them with POST /v1/checks, which counts outcomes")

    /// An issued code sealed under another `--code-secret`: nothing is allowed without its code.
    public static let unreadableCode = GateError(
        .storeUnavailable,
        "store unavailable: the number's issued code was sealed under another code secret (every gate must share one --code-secret)")

    /// The purpose's policy allows no refunds (`max refunds` 0): the release changed nothing.
    public static let refundsDisabled = GateError(
        .forbidden, "refunds are disabled for this purpose (max refunds 0); the cooldown keeps running")

    /// Redis did not answer, or answered something unusable: nothing was decided.
    public static func storeUnavailable(_ message: String) -> GateError {
        GateError(.storeUnavailable, "store unavailable: \(message)")
    }

    /// A Redis failure: `store_evicts_keys` when refused because Redis may evict keys, else
    /// `store_unavailable`.
    public static func store(_ error: RedisError) -> GateError {
        error.isEviction ? storeEvictsKeys(error.message) : storeUnavailable(error.description)
    }

    public static func storeEvictsKeys(_ message: String) -> GateError {
        GateError(.storeEvictsKeys, "store refused: \(message)")
    }
}
