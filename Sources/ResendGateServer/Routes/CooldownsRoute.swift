import GateRuntime
import ResendGate

/// `GET` (peek) and `DELETE` (refund) of `/v1/cooldowns/{phone}?purpose=P`. A refund
/// past the purpose's `max refunds` is 429 `refund_limit` with `Retry-After` (when the
/// oldest refund leaves the window); with `max refunds` 0 it is 403 `forbidden`.
extension Worker {
    func handleCooldown(_ exchange: Exchange, encodedPhone: Substring) {
        let phone: PhoneNumber
        let purpose: Purpose
        do {
            (phone, purpose) = try cooldownTarget(exchange, encodedPhone: encodedPhone)
        } catch {
            return respond(exchange, error: error)
        }
        if exchange.method == .delete {
            gate.release(phone, purpose: purpose) { [unowned self] result in
                switch result {
                case .success: self.respond(exchange, status: 204, body: [])
                case .failure(let error) where error.kind == .refundLimit || error.kind == .locked:
                    self.respondLimited(exchange, error, purpose: purpose)
                case .failure(let error): self.respond(exchange, error: APIError(error))
                }
            }
        } else {
            gate.peek(phone, purpose: purpose) { [unowned self] result in
                switch result {
                case .success(let status): self.respond(exchange, status: 200) { status.writeJSON(to: &$0) }
                case .failure(let error): self.respond(exchange, error: APIError(error))
                }
            }
        }
    }

    private func cooldownTarget(_ exchange: Exchange, encodedPhone: Substring) throws(APIError) -> (PhoneNumber, Purpose) {
        guard let phoneText = PercentDecoding.decode(encodedPhone) else {
            throw .invalidPhone("the phone number in the path is not valid percent-encoding")
        }
        let purposeText = try PercentDecoding.queryValue("purpose", in: exchange.query) ?? Purpose.default.name
        let region = try PercentDecoding.queryValue("region", in: exchange.query)
        do {
            return (try gate.phone(phoneText, region: region), try gate.purpose(purposeText))
        } catch {
            throw APIError(error)
        }
    }

    /// A 429 error answer (`refund_limit`, `locked`) with `Retry-After` and the IETF
    /// `RateLimit` pair, whose quota is the limit's: the refunds or the wrong codes a window.
    func respondLimited(_ exchange: Exchange, _ error: GateError, purpose: Purpose) {
        let policy = gate.configuration.policies.policy(for: purpose)
        let quota = error.kind == .locked ? policy.maxFailedChecks : policy.maxRefunds
        respond(exchange, error: APIError(error), headers: WaitEncoding.headers(
            error.retryAfterMilliseconds ?? 0, limit: error.code, quota: quota))
    }
}
