import ResendGate

/// An error answer of the HTTP API: a stable `code`, a message for people, and
/// the one place where codes map to HTTP statuses.
struct APIError: Error, Equatable {
    let code: String
    let message: String
    /// For `refund_limit`: how long until the limit frees a refund, sent as
    /// `retry_after`/`retry_after_ms` in the error object and as `Retry-After`.
    var retryAfterMilliseconds: Int64?

    init(_ code: String, _ message: String, retryAfterMilliseconds: Int64? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// The HTTP status of each code; every error answer goes through here.
    var status: Int {
        switch code {
        case "invalid_json", "invalid_phone", "invalid_purpose", "missing_field", "invalid_field", "bad_request": 400
        case "unauthorized": 401
        case "region_not_allowed", "number_type_not_allowed", "forbidden": 403
        case "not_found": 404
        case "method_not_allowed": 405
        case "body_too_large": 413
        case "unsupported_media_type": 415
        case "misdirected_request": 421
        case "idempotency_key_reused": 422
        case "refund_limit": 429
        case "header_too_large": 431
        case "store_unavailable": 503
        default: 500
        }
    }

    init(_ error: GateError) {
        self.init(error.code, error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)
    }

    /// A valid API key that lacks the scope the route needs.
    static func forbidden(_ scope: APIScopes) -> APIError {
        let name = APIScopes.names.first { $0.scope == scope }?.name ?? "another"
        return APIError("forbidden", "this API key may not do this: it needs the \(name) scope (see --api-keys-file)")
    }

    static func notFound(_ path: Substring) -> APIError {
        APIError("not_found", "no route for \(path.prefix(200))")
    }

    static func methodNotAllowed(_ allowed: String) -> APIError {
        APIError("method_not_allowed", "this route accepts \(allowed)")
    }

    static let unauthorized = APIError("unauthorized", "a valid API key is required: Authorization: Bearer <key>")

    func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.key("error")
        json.beginObject()
        json.field("code", code)
        json.field("message", message)
        if let retryAfterMilliseconds {
            json.field("retry_after", Decision.wholeSeconds(retryAfterMilliseconds))
            json.field("retry_after_ms", retryAfterMilliseconds)
        }
        json.endObject()
        json.endObject()
    }
}
