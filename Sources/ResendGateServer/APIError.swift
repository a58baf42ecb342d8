import ResendGate

/// An error answer of the HTTP API: a stable `code`, a message for people, and the one
/// place where errors get their HTTP status. A gate error keeps its `GateError.Kind`, so
/// `status` switches over every kind with no default: a new kind does not build until
/// it has a status here.
struct APIError: Error, Equatable {
    /// Every error code of the API: the gate's own, and those only HTTP can have.
    private enum Code: Equatable {
        case gate(GateError.Kind)
        case invalidJSON, missingField, badRequest, unauthorized, notFound, methodNotAllowed
        case bodyTooLarge, unsupportedMediaType, misdirectedRequest, headerTooLarge
    }

    private let reason: Code
    let message: String
    /// For `refund_limit` and `locked`: how long until the limit frees a refund or the lock ends, sent as
    /// `retry_after`/`retry_after_ms` in the error object and as `Retry-After`.
    let retryAfterMilliseconds: Int64?

    private init(_ reason: Code, _ message: String, retryAfterMilliseconds: Int64? = nil) {
        self.reason = reason
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// A gate error as the API answers it: same code, message and retry time.
    init(_ error: GateError) {
        self.init(.gate(error.kind), error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)
    }

    /// The HTTP status of each code; every error answer goes through here.
    var status: Int {
        switch reason {
        case .gate(let kind):
            switch kind {
            case .invalidPhone, .invalidPurpose, .invalidField: 400
            case .regionNotAllowed, .numberTypeNotAllowed, .forbidden: 403
            case .idempotencyKeyReused: 422
            case .noCodeSent, .codeLocked: 409
            case .refundLimit, .locked: 429
            case .storeUnavailable: 503
            }
        case .invalidJSON, .missingField, .badRequest: 400
        case .unauthorized: 401
        case .notFound: 404
        case .methodNotAllowed: 405
        case .bodyTooLarge: 413
        case .unsupportedMediaType: 415
        case .misdirectedRequest: 421
        case .headerTooLarge: 431
        }
    }

    /// The stable wire code (`invalid_json`, `store_unavailable`, ...); deploy/openapi.yaml lists them.
    var code: String {
        switch reason {
        case .gate(let kind): kind.rawValue
        case .invalidJSON: "invalid_json"
        case .missingField: "missing_field"
        case .badRequest: "bad_request"
        case .unauthorized: "unauthorized"
        case .notFound: "not_found"
        case .methodNotAllowed: "method_not_allowed"
        case .bodyTooLarge: "body_too_large"
        case .unsupportedMediaType: "unsupported_media_type"
        case .misdirectedRequest: "misdirected_request"
        case .headerTooLarge: "header_too_large"
        }
    }

    static func invalidJSON(_ message: String) -> APIError { APIError(.invalidJSON, message) }
    static func missingField(_ message: String) -> APIError { APIError(.missingField, message) }
    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, message) }
    static func bodyTooLarge(_ message: String) -> APIError { APIError(.bodyTooLarge, message) }
    static func unsupportedMediaType(_ message: String) -> APIError { APIError(.unsupportedMediaType, message) }
    static func misdirectedRequest(_ message: String) -> APIError { APIError(.misdirectedRequest, message) }
    static func headerTooLarge(_ message: String) -> APIError { APIError(.headerTooLarge, message) }
    static func notFound(message: String) -> APIError { APIError(.notFound, message) }
    /// The gate's codes that HTTP gives for its own reasons too (a path, a query, an origin, `/readyz`).
    static func invalidPhone(_ message: String) -> APIError { APIError(.gate(.invalidPhone), message) }
    static func invalidField(_ message: String) -> APIError { APIError(.gate(.invalidField), message) }
    static func forbidden(_ message: String) -> APIError { APIError(.gate(.forbidden), message) }
    static func storeUnavailable(_ message: String) -> APIError { APIError(.gate(.storeUnavailable), message) }

    /// A valid API key that lacks the scope the route needs.
    static func forbidden(_ scope: APIScopes) -> APIError {
        let name = APIScopes.names.first { $0.scope == scope }?.name ?? "another"
        return .forbidden("this API key may not do this: it needs the \(name) scope, which the gate's API key list gives it")
    }

    static func notFound(_ path: Substring) -> APIError {
        .notFound(message: "no route for \(path.prefix(200))")
    }

    static func methodNotAllowed(_ allowed: String) -> APIError {
        APIError(.methodNotAllowed, "this route accepts \(allowed)")
    }

    static let unauthorized = APIError(.unauthorized, "a valid API key is required: Authorization: Bearer <key>")

    func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.key("error")
        json.beginObject()
        json.field("code", code)
        json.field("message", message)
        if let retryAfterMilliseconds {
            WaitEncoding.write(retryAfterMilliseconds, to: &json)
        }
        json.endObject()
        json.endObject()
    }
}
