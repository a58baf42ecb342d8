import ResendGate

/// `GET /v1/countdowns/{token}` and `GET /v1/countdowns/{token}/events` (`stream`): a
/// cooldown's remaining time through its unguessable token, with no API key, for thin clients.
enum CountdownsRoute {
    static func get(_ c: Exchange, stream: Bool) {
        // Checked before Redis sees it; malformed and unknown tokens get the same answer.
        guard let token = CountdownToken(validating: c.parameter) else { return c.respond(.countdownNotFound) }
        c.gate.countdown(token) { result in
            let streams = c.worker.countdownStreams!
            let arrived = streams.center.clock.now
            switch result {
            case .success(let reading?) where stream:
                streams.open(c, token: token, reading: reading, measuredAt: arrived)
                c.worker.finish(c, status: 200)
            case .success(let reading?):
                c.respond(status: 200, headers: [("Cache-Control", "no-store")]) { reading.writeJSON(to: &$0) }
            case .success(nil):
                c.respond(.countdownNotFound)
            case .failure(let error):
                c.respond(APIError(error))
            }
        }
    }
}

extension APIError {
    static let countdownNotFound = APIError.notFound(message: "no running countdown has this token: it is unknown, or its cooldown ended or was released")
}
