import Foundation
import ResendGate

/// `POST /v1/sends`: reserve a send if the number's cooldown allows it.
extension Worker {
    func handleSend(_ exchange: Exchange) {
        let request = exchange.request
        if let refusal = framingProblem(request) {
            return respond(exchange, error: refusal, headers: [("Connection", "close")])
        }
        guard request.bodyLength <= configuration.maxBodyBytes else {
            return respond(exchange, error: APIError(
                "body_too_large", "the body may be at most \(configuration.maxBodyBytes) bytes"), headers: [("Connection", "close")])
        }
        if let type = request.header("Content-Type"), !Self.isJSON(type) {
            return respond(exchange, error: APIError("unsupported_media_type", "send the body as JSON with the header Content-Type: application/json"))
        }
        request.readBody(into: &bodyBuffer)
        let input: SendInput
        do {
            input = try SendInput(body: bodyBuffer, gate: gate)
        } catch {
            return respond(exchange, error: error)
        }
        gate.reserve(input.phone, purpose: input.purpose) { [unowned self] result in
            switch result {
            case .success(let decision):
                self.metrics.add(decision.allowed ? .allowed : .deniedCooldown)
                self.respond(exchange, status: decision.allowed ? 200 : 429,
                             headers: decision.allowed ? [] : Self.rateLimitHeaders(decision)) { decision.writeJSON(to: &$0) }
            case .failure(let error):
                self.respond(exchange, error: APIError(error))
            }
        }
    }

    /// Refuses requests whose framing two parsers could read two ways (request
    /// smuggling): a body length given twice, or both a length and chunking.
    func framingProblem(_ request: HTTPRequest) -> APIError? {
        let lengths = request.headerCount("Content-Length")
        let encodings = request.headerCount("Transfer-Encoding")
        if lengths > 1 || encodings > 1 || (lengths > 0 && encodings > 0) {
            return APIError("bad_request", "ambiguous message framing: send one Content-Length or chunked encoding, not both")
        }
        return nil
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        return mediaType == "application/json" || (mediaType?.hasSuffix("+json") ?? false)
    }

    /// `Retry-After` and the IETF `RateLimit` / `RateLimit-Policy` pair, matching the body:
    /// the policy allows one send per cooldown, none is left, and it resets in `retry_after`.
    static func rateLimitHeaders(_ decision: Decision) -> [(String, String)] {
        let seconds = String(decision.retryAfter)
        return [
            ("Retry-After", seconds),
            ("RateLimit-Policy", "\"\(decision.reason?.rawValue ?? "cooldown")\";q=1"),
            ("RateLimit", "\"\(decision.reason?.rawValue ?? "cooldown")\";r=0;t=\(seconds)"),
        ]
    }
}

/// The fields of a `POST /v1/sends` body, validated.
struct SendInput {
    let phone: PhoneNumber
    let purpose: Purpose
    let clientIP: String?

    init(body: [UInt8], gate: GateWorker) throws(APIError) {
        let fields: JSONFields
        do {
            fields = try JSONFields(parsing: body)
        } catch {
            switch error {
            case .notAnObject: throw APIError("invalid_json", "the body must be a JSON object")
            case .malformed(let reason): throw APIError("invalid_json", "the body is not valid JSON: \(reason)")
            }
        }
        let phoneText = try Self.string(fields, "phone", required: true)!
        let purposeText = try Self.string(fields, "purpose", required: false) ?? Purpose.default.name
        clientIP = try Self.string(fields, "client_ip", required: false)
        if let clientIP, !IPAddress.isValid(clientIP) {
            throw APIError("invalid_field", "client_ip must be an IPv4 or IPv6 address")
        }
        do {
            purpose = try Purpose(purposeText)
            phone = try gate.phone(phoneText)
        } catch {
            throw APIError(error)
        }
    }

    private static func string(_ fields: JSONFields, _ name: String, required: Bool) throws(APIError) -> String? {
        let value: JSONFields.Value?
        do { value = try fields.value(name) } catch { throw APIError("invalid_json", "the member \"\(name)\" appears twice") }
        switch value {
        case .string(let text)?: return text
        case nil, .null?:
            if required { throw APIError("missing_field", "the body needs \"\(name)\"") }
            return nil
        default: throw APIError("invalid_field", "\"\(name)\" must be a string")
        }
    }
}
