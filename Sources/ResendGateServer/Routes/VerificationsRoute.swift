import ResendGate

/// `POST /v1/verifications`: the back end reports the outcome of a code it checked.
/// `verified` clears the number's wrong codes; `failed` counts one, and at the policy's
/// `max failed checks` locks the number (429 `locked`, with `Retry-After`), after which
/// its sends and verifications are 429 `locked` until the lockout ends.
extension Worker {
    func handleVerification(_ exchange: Exchange) {
        guard readJSONBody(exchange) else { return }
        let input: (phone: PhoneNumber, purpose: Purpose, outcome: VerificationOutcome)
        do {
            input = try VerificationInput.decode(body: bodyBuffer, gate: gate)
        } catch {
            return respond(exchange, error: error)
        }
        gate.verify(input.phone, purpose: input.purpose, outcome: input.outcome) { [unowned self] result in
            switch result {
            case .success(let verification):
                if verification.outcome == .verified { self.metrics.callingCodes.addVerification(callingCode: input.phone.countryCode) }
                self.respond(exchange, status: 200) { verification.writeJSON(to: &$0) }
            case .failure(let error) where error.kind == .locked:
                self.respondLimited(exchange, error, purpose: input.purpose)
            case .failure(let error):
                self.respond(exchange, error: APIError(error))
            }
        }
    }
}

/// The fields of a `POST /v1/verifications` body, validated.
enum VerificationInput {
    static func decode(body: [UInt8], gate: GateWorker) throws(APIError) -> (PhoneNumber, Purpose, VerificationOutcome) {
        let fields = try SendInput.object(body)
        let phoneText = try SendInput.string(fields, "phone", required: true)!
        let purposeText = try SendInput.string(fields, "purpose", required: false) ?? Purpose.default.name
        let region = try SendInput.string(fields, "region", required: false)
        let outcomeText = try SendInput.string(fields, "outcome", required: true)!
        guard let outcome = VerificationOutcome(rawValue: outcomeText) else {
            throw .invalidField("\"outcome\" must be \"verified\" or \"failed\"")
        }
        do throws(GateError) {
            return (try gate.phone(phoneText, region: region), try gate.purpose(purposeText), outcome)
        } catch {
            throw APIError(error)
        }
    }
}
