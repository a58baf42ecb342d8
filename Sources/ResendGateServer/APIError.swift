import ResendGate

/// An error answer of the HTTP API: a stable `code` and a message for people. The one
/// place where errors get their HTTP status; the switch over `GateError.Kind` has no
/// default, so a new kind does not build until it has one.
struct APIError: Error, Equatable {
    /// The stable wire code (`invalid_json`, `store_unavailable`, ...); deploy/openapi.yaml lists them.
    let code: String
    let status: Int
    let message: String
    /// For `refund_limit`, `locked` and `code_locked`: how long until a refund, the lock's
    /// end or a new code, as `retry_after`/`retry_after_ms` and `Retry-After`.
    let retryAfterMilliseconds: Int64?
    /// For `wrong_code`: wrong checks the code may still have, sent as `attempts_left`.
    var attemptsLeft: Int?

    private init(_ code: String, _ status: Int, _ message: String, retryAfterMilliseconds: Int64? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// A gate error's kind, with its status.
    private init(_ kind: GateError.Kind, _ message: String, retryAfterMilliseconds: Int64? = nil) {
        let status = switch kind {
        case .invalidPhone, .invalidPurpose, .invalidField: 400
        case .regionNotAllowed, .numberTypeNotAllowed, .forbidden: 403
        case .idempotencyKeyReused, .wrongCode: 422
        case .noCodeSent, .codeLocked, .codeUsed, .codesNotIssued, .codesIssued: 409
        case .codeExpired, .codeVoided: 410
        case .refundLimit, .locked: 429
        case .storeUnavailable, .storeEvictsKeys: 503
        }
        self.init(kind.rawValue, status, message, retryAfterMilliseconds: retryAfterMilliseconds)
    }

    /// A send decision's status: 200 allowed; any refusal (`DecisionReason`) is 429.
    static func status(of reason: DecisionReason?) -> Int {
        reason == nil ? 200 : 429
    }

    /// A gate error as the API answers it: same code, message and retry time.
    init(_ error: GateError) {
        self.init(error.kind, error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)
        attemptsLeft = error.attemptsLeft
    }

    /// What `body` returns; a gate error it throws, as the API answers it.
    static func answering<T>(_ body: () throws(GateError) -> T) throws(APIError) -> T {
        do { return try body() } catch { throw APIError(error) }
    }

    /// The codes only HTTP has.
    static func invalidJSON(_ message: String) -> APIError { APIError("invalid_json", 400, message) }
    static func missingField(_ message: String) -> APIError { APIError("missing_field", 400, message) }
    static func badRequest(_ message: String) -> APIError { APIError("bad_request", 400, message) }
    static func bodyTooLarge(_ message: String) -> APIError { APIError("body_too_large", 413, message) }
    static func unsupportedMediaType(_ message: String) -> APIError { APIError("unsupported_media_type", 415, message) }
    static func misdirectedRequest(_ message: String) -> APIError { APIError("misdirected_request", 421, message) }
    static func headerTooLarge(_ message: String) -> APIError { APIError("header_too_large", 431, message) }
    static func notFound(message: String) -> APIError { APIError("not_found", 404, message) }
    static func notFound(_ path: Substring) -> APIError { .notFound(message: "no route for \(path.prefix(200))") }
    static func methodNotAllowed(_ allowed: String) -> APIError { APIError("method_not_allowed", 405, "this route accepts \(allowed)") }
    /// The gate's codes that HTTP gives for its own reasons too (a path, a query, an origin, `/readyz`).
    static func invalidPhone(_ message: String) -> APIError { APIError(.invalidPhone, message) }
    static func invalidField(_ message: String) -> APIError { APIError(.invalidField, message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, message) }
    static func storeUnavailable(_ message: String) -> APIError { APIError(.storeUnavailable, message) }
    static func storeEvictsKeys(_ message: String) -> APIError { APIError(.storeEvictsKeys, message) }

    /// A valid API key that lacks the scope the route needs.
    static func forbidden(_ scope: APIScopes) -> APIError {
        let name = APIScopes.names.first { $0.scope == scope }?.name ?? "another"
        return .forbidden("this API key may not do this: it needs the \(name) scope, which the gate's API key list gives it")
    }

    static let unauthorized = APIError("unauthorized", 401, "a valid API key is required: Authorization: Bearer <key>")

    func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.key("error")
        json.beginObject()
        json.field("code", code)
        json.field("message", message)
        if let retryAfterMilliseconds { WaitEncoding.write(retryAfterMilliseconds, to: &json) }
        if let attemptsLeft { json.field("attempts_left", Int64(attemptsLeft)) }
        json.endObject()
        json.endObject()
    }
}
