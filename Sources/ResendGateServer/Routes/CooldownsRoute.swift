import ResendGate

/// `GET` (peek) and `DELETE` (release) of `/v1/cooldowns/{phone}?purpose=P`.
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
}

extension Worker {
    private func cooldownTarget(_ exchange: Exchange, encodedPhone: Substring) throws(APIError) -> (PhoneNumber, Purpose) {
        guard let phoneText = PercentDecoding.decode(encodedPhone) else {
            throw APIError("invalid_phone", "the phone number in the path is not valid percent-encoding")
        }
        let purposeText = try PercentDecoding.queryValue("purpose", in: exchange.query) ?? Purpose.default.name
        do {
            return (try gate.phone(phoneText), try Purpose(purposeText))
        } catch {
            throw APIError(error)
        }
    }
}

