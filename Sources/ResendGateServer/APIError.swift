import ResendGate

/// An error answer of the HTTP API: a stable `code`, a message for people, and
/// the one place where codes map to HTTP statuses.
struct APIError: Error, Equatable {
    let code: String
    let message: String

    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
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
        case "header_too_large": 431
        case "store_unavailable": 503
        default: 500
        }
    }

    init(_ error: GateError) {
        self.init(error.code, error.message)
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
        json.endObject()
        json.endObject()
    }
}
