/// Why the gate could not decide. `code` is stable: the HTTP layer maps codes to
/// statuses in one place, and the CLI maps them to exit codes.
public struct GateError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidPhone = "invalid_phone"
        case invalidPurpose = "invalid_purpose"
        case invalidField = "invalid_field"
        case regionNotAllowed = "region_not_allowed"
        case numberTypeNotAllowed = "number_type_not_allowed"
        case idempotencyKeyReused = "idempotency_key_reused"
        case refundLimit = "refund_limit"
        case forbidden
        case storeUnavailable = "store_unavailable"
    }

    private let kind: Code
    /// A sentence for people: what went wrong and, where it helps, what to do.
    public let message: String
    /// For `invalid_phone`: the precise reason.
    public let phoneError: PhoneNumberError?
    /// For `refund_limit`: milliseconds until the oldest refund leaves the window.
    public let retryAfterMilliseconds: Int64?

    private init(_ kind: Code, _ message: String, phoneError: PhoneNumberError? = nil, retryAfterMilliseconds: Int64? = nil) {
        self.kind = kind
        self.message = message
        self.phoneError = phoneError
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// The stable code: `invalid_phone`, `invalid_purpose`, `invalid_field`, `region_not_allowed`,
    /// `number_type_not_allowed`, `idempotency_key_reused`, `refund_limit`, `forbidden` or
    /// `store_unavailable`.
    public var code: String { kind.rawValue }

    /// True when the input was wrong (a 4xx), false when the store failed (a 5xx).
    public var isBadInput: Bool { kind != .storeUnavailable }

    /// True when a policy refuses the number itself (its region or line type) or a
    /// refund (past `max refunds`, or refunds disabled): a denial, not a mistake in the request.
    public var isPolicyDenial: Bool {
        kind == .regionNotAllowed || kind == .numberTypeNotAllowed || kind == .refundLimit || kind == .forbidden
    }

    public var description: String { message }

    public static func invalidPhone(_ reason: PhoneNumberError) -> GateError {
        GateError(.invalidPhone, reason.description, phoneError: reason)
    }

    public static func invalidPurpose(_ message: String) -> GateError {
        GateError(.invalidPurpose, message)
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

    /// The number had its `max refunds` in the window: the release changed nothing.
    public static func refundLimit(retryAfterMilliseconds: Int64, maxRefunds: Int) -> GateError {
        GateError(
            .refundLimit,
            "this number had its \(maxRefunds) refund\(maxRefunds == 1 ? "" : "s") in the window; its cooldown keeps running",
            retryAfterMilliseconds: retryAfterMilliseconds)
    }

    /// The purpose's policy allows no refunds (`max refunds` 0): the release changed nothing.
    public static let refundsDisabled = GateError(
        .forbidden, "refunds are disabled for this purpose (max refunds 0); the cooldown keeps running")

    public static func storeUnavailable(_ message: String) -> GateError {
        GateError(.storeUnavailable, "store unavailable: \(message)")
    }

    public static func == (lhs: GateError, rhs: GateError) -> Bool {
        lhs.kind == rhs.kind && lhs.message == rhs.message && lhs.retryAfterMilliseconds == rhs.retryAfterMilliseconds
    }
}
