/// Maps a request to its handler. Every route of the API is listed here, with the API
/// key scope it needs: `send` for POST /v1/sends, `read` for peeks and the blocked
/// prefixes (GET /v1/prefixes), `release` for refunds, `verify` for POST
/// /v1/verifications and POST /v1/checks; countdowns and the operational routes need no key.
extension Worker {
    func route(_ exchange: Exchange) {
        let path = exchange.path
        let method = exchange.method
        if let refusal = browserRefusal(exchange) { return respond(exchange, error: refusal) }
        switch path {
        case "/v1/sends":
            guard method == .post else { return methodNotAllowed(exchange, "POST") }
            guard let grant = permits(exchange, .send) else { return }
            handleSend(exchange, caller: grant.caller)
        case "/v1/verifications":
            guard method == .post else { return methodNotAllowed(exchange, "POST") }
            guard permits(exchange, .verify) != nil else { return }
            handleVerification(exchange)
        case "/v1/checks":
            guard method == .post else { return methodNotAllowed(exchange, "POST") }
            guard permits(exchange, .verify) != nil else { return }
            handleCheck(exchange)
        case _ where path.hasPrefix("/v1/cooldowns/"):
            // Exactly one segment: /v1/cooldowns/{phone}/x is no route (an encoded %2F
            // stays inside the segment, as a separator of the number).
            let encodedPhone = path.dropFirst("/v1/cooldowns/".count)
            guard !encodedPhone.contains("/") else { return respond(exchange, error: .notFound(path)) }
            guard method == .get || method == .head || method == .delete else {
                return methodNotAllowed(exchange, "GET, HEAD, DELETE")
            }
            guard permits(exchange, method == .delete ? .release : .read) != nil else { return }
            handleCooldown(exchange, encodedPhone: encodedPhone)
        case "/v1/prefixes":
            guard method == .get || method == .head else { return methodNotAllowed(exchange, "GET, HEAD") }
            guard permits(exchange, .read) != nil else { return }
            handlePrefixes(exchange)
        case _ where path.hasPrefix("/v1/countdowns/"):
            // No API key: the unguessable token is the credential, and it reveals no number.
            handleCountdown(exchange, path: path)
        case "/healthz", "/readyz", "/metrics", "/", "/openapi.yaml":
            guard method == .get || method == .head else { return methodNotAllowed(exchange, "GET, HEAD") }
            handleOperational(exchange)
        default:
            respond(exchange, error: .notFound(path))
        }
    }

    static let challenge = [("WWW-Authenticate", "Bearer realm=\"resendgate\"")]

    func methodNotAllowed(_ exchange: Exchange, _ allowed: String) {
        respond(exchange, error: .methodNotAllowed(allowed), headers: [("Allow", allowed)])
    }
}
