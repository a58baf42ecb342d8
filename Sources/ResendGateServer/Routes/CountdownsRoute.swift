import ResendGate

/// `GET /v1/countdowns/{token}` and `GET /v1/countdowns/{token}/events`: a cooldown's
/// remaining time through its unguessable token, with no API key, for thin clients.
extension Worker {
    func handleCountdown(_ exchange: Exchange, path: Substring) {
        let method = exchange.method
        // `{token}` or `{token}/events`, nothing more: other paths are no route.
        let rest = path.dropFirst("/v1/countdowns/".count)
        let slash = rest.firstIndex(of: "/")
        let tokenText = slash.map { rest[..<$0] } ?? rest
        let suffix = slash.map { rest[$0...] }
        guard !tokenText.isEmpty, suffix == nil || suffix == "/events" else {
            return respond(exchange, error: .notFound(path))
        }
        let isStream = suffix != nil
        guard method == .get || (method == .head && !isStream) else {
            return methodNotAllowed(exchange, isStream ? "GET" : "GET, HEAD")
        }
        // Checked before Redis sees it; malformed and unknown tokens get the same answer.
        guard let token = CountdownToken(validating: tokenText) else {
            return respond(exchange, error: .countdownNotFound)
        }
        gate.countdown(token) { [unowned self] result in
            let arrived = self.countdownStreams.clock.now
            switch result {
            case .success(let reading?) where isStream:
                self.countdownStreams.open(
                    exchange.request, token: token, identity: reading.cooldownIdentity, remaining: .milliseconds(reading.retryAfterMilliseconds),
                    measuredAt: arrived, requestID: exchange.id)
                self.finish(exchange, status: 200)
            case .success(let reading?):
                self.respond(exchange, status: 200, headers: [("Cache-Control", "no-store")]) { reading.writeJSON(to: &$0) }
            case .success(nil):
                self.respond(exchange, error: .countdownNotFound)
            case .failure(let error):
                self.respond(exchange, error: APIError(error))
            }
        }
    }
}

extension APIError {
    static let countdownNotFound = APIError.notFound(message: "no running countdown has this token: it is unknown, or its cooldown ended or was released")
}
