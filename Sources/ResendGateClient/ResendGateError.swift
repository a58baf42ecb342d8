import Foundation

/// Every failure of a ``ResendGateClient`` call: the API's own error ``code`` and HTTP status
/// when the server (or a gateway in front of it) answered, or one of the client's codes when
/// it did not. ``errorDescription`` is a sentence for the user (English or Simplified
/// Chinese, by ``ResendButtonStrings``); ``message`` is the server's or the kit's debug text.
///
/// A refused send is not an error: it is a ``Decision`` with `allowed == false`.
public struct ResendGateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code: the API's `error.code` (``invalidPhone``, ``notFound``, ...) or
    /// one of the client's (``transport``, ``cancelled``, ``invalidResponse``, ...). Written
    /// as a string literal too (`"code_locked"`), so a code this kit does not name yet
    /// still reads and compares.
    public struct Code: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The code as the API writes it.
        public var rawValue: String
        /// A code from the API's word.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A code from a literal.
        public init(stringLiteral value: String) { rawValue = value }
        /// The API's word.
        public var description: String { rawValue }
    }

    /// What went wrong, as a stable code (the mapping of every one: docs/clients.md).
    public var code: Code
    /// The server's message, or what went wrong on this side: debug text, not for users.
    public var message: String
    /// The HTTP status of the answer; nil when there was none (``transport``).
    public var status: Int?
    /// How long to wait before trying again, when the server or a gateway said (the error
    /// object's `retry_after_ms`, or a `Retry-After` header); nil when nobody did.
    public var retryAfter: Duration?
    /// For ``wrongCode``: how many more codes may be tried before the code locks.
    public var attemptsLeft: Int?
    /// True when the device has no network (no internet, cellular data off, roaming off):
    /// retrying now cannot help; show "You are offline" instead.
    public var isOffline: Bool

    /// Makes an error.
    public init(code: Code, message: String, status: Int? = nil, retryAfter: Duration? = nil,
                attemptsLeft: Int? = nil, isOffline: Bool = false) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfter = retryAfter
        self.attemptsLeft = attemptsLeft
        self.isOffline = isOffline
    }

    /// `code (HTTP status): message`.
    public var description: String {
        "\(code)\(status.map { " (HTTP \($0))" } ?? ""): \(message)"
    }

    /// Whether the same request, sent again unchanged, may succeed: no answer (but not
    /// offline), a gateway's or the store's temporary failure (5xx, a 429 of a gateway).
    /// A refused phone, a wrong code, a lock or a missing key never change by retrying.
    public var isRetriable: Bool {
        if isOffline || code == Self.cancelled { return false }
        if code == Self.transport { return true }
        guard let status else { return false }
        return status >= 500 || (status == 429 && code == Self.rateLimited) || status == 408
    }
}

// MARK: - Codes

extension ResendGateError {
    // The client's own.
    /// No answer: the connection failed or dropped, or the request timed out (see ``isOffline``).
    public static let transport: Code = "transport"
    /// The task that made the call was cancelled (not a failure: nothing to show).
    public static let cancelled: Code = "cancelled"
    /// The server answered something the API does not describe (status, JSON or event stream).
    public static let invalidResponse: Code = "invalid_response"
    /// An event stream line or event was longer than ``ServerSentEventParser/maximumEventBytes``,
    /// or the stream ran too far ahead of its reader.
    public static let streamTooLarge: Code = "stream_too_large"
    /// A 429 that is not a send decision and names no code: the back end's or a gateway's own
    /// rate limit (its `Retry-After`, if any, is in ``retryAfter``).
    public static let rateLimited: Code = "rate_limited"
    /// An HTTP error without the API's error body (a proxy's 502 page, say): ``status`` says which.
    public static let httpError: Code = "http_error"
    /// The header provider (``ResendGateClient/HeaderProvider``) threw: no request was sent.
    public static let authentication: Code = "authentication"

    // The API's (Sources/ResendGateServer/APIError.swift, docs/API.md#errors).
    public static let invalidJSON: Code = "invalid_json"
    public static let missingField: Code = "missing_field"
    public static let invalidField: Code = "invalid_field"
    public static let invalidPhone: Code = "invalid_phone"
    public static let invalidPurpose: Code = "invalid_purpose"
    public static let badRequest: Code = "bad_request"
    public static let unauthorized: Code = "unauthorized"
    public static let forbidden: Code = "forbidden"
    public static let regionNotAllowed: Code = "region_not_allowed"
    public static let numberTypeNotAllowed: Code = "number_type_not_allowed"
    /// An unknown, expired or released countdown token (or no such route).
    public static let notFound: Code = "not_found"
    public static let methodNotAllowed: Code = "method_not_allowed"
    public static let bodyTooLarge: Code = "body_too_large"
    public static let unsupportedMediaType: Code = "unsupported_media_type"
    public static let misdirectedRequest: Code = "misdirected_request"
    public static let idempotencyKeyReused: Code = "idempotency_key_reused"
    public static let refundLimit: Code = "refund_limit"
    /// The number is locked by wrong codes (with ``retryAfter``).
    public static let locked: Code = "locked"
    public static let noCodeSent: Code = "no_code_sent"
    /// The code had too many wrong tries (with ``retryAfter``: until a new one may be sent).
    public static let codeLocked: Code = "code_locked"
    public static let headerTooLarge: Code = "header_too_large"
    public static let storeUnavailable: Code = "store_unavailable"
    /// The gate's Redis may evict keys, so the gate refuses to decide (an operator's fix).
    public static let storeEvictsKeys: Code = "store_evicts_keys"

    // Issued codes (`POST /v1/checks`).
    /// A wrong code (with ``attemptsLeft``).
    public static let wrongCode: Code = "wrong_code"
    /// The code's lifetime is over, or none was issued.
    public static let codeExpired: Code = "code_expired"
    /// The code was already verified once.
    public static let codeUsed: Code = "code_used"
    /// The code was voided by a refund.
    public static let codeVoided: Code = "code_voided"
    /// The purpose does not issue codes.
    public static let codesNotIssued: Code = "codes_not_issued"
    /// An outcome reported (`POST /v1/verifications`) for a purpose whose codes the gate issues.
    public static let codesIssued: Code = "codes_issued"

    /// Every code the server answers with (its `APIError` and the issued codes' check), each
    /// mapped to a sentence by ``ResendErrorStrings/message(for:strings:)``.
    public static let apiCodes: [Code] = [
        invalidJSON, missingField, invalidField, invalidPhone, invalidPurpose, badRequest, unauthorized, forbidden,
        regionNotAllowed, numberTypeNotAllowed, notFound, methodNotAllowed, bodyTooLarge, unsupportedMediaType,
        misdirectedRequest, idempotencyKeyReused, refundLimit, locked, noCodeSent, codeLocked, headerTooLarge,
        storeUnavailable, storeEvictsKeys, wrongCode, codeExpired, codeUsed, codeVoided, codesNotIssued, codesIssued,
    ]
}

// MARK: - For users

extension ResendGateError: LocalizedError {
    /// A sentence for the user in English (``ResendButtonStrings/english``); use
    /// ``userMessage(_:)`` for another language.
    public var errorDescription: String? { userMessage(.english) }

    /// A sentence for the user in `strings`' language: what happened and what to do, never
    /// debug text.
    public func userMessage(_ strings: ResendButtonStrings) -> String {
        strings.errors.message(for: self, strings: strings)
    }
}

extension ResendGateError {
    /// Whether an `URLError` means the device is offline (retrying now cannot help).
    static func isOffline(_ error: any Error) -> Bool {
        guard let code = (error as? URLError)?.code else { return false }
        return [.notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff, .callIsActive].contains(code)
    }

    /// The error for a failed load: cancelled, offline or another transport failure.
    static func transport(_ error: any Error) -> ResendGateError {
        if Task.isCancelled || (error as? URLError)?.code == .cancelled || error is CancellationError {
            return ResendGateError(code: cancelled, message: "the call was cancelled")
        }
        return ResendGateError(code: transport, message: "\(error)", isOffline: isOffline(error))
    }
}
