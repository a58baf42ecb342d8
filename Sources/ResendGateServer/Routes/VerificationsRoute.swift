import ResendGate

/// `POST /v1/verifications`: the outcome of a code the back end checked. `verified` clears
/// the wrong codes; `failed` counts one, and at `max failed checks` locks the number's
/// sends and verifications (429 `locked`, `Retry-After`) until the lockout ends.
enum VerificationsRoute {
    static func post(_ c: Exchange) {
        guard let (phone, purpose, outcome) = c.numberBody({ fields throws(APIError) in
            guard let outcome = VerificationOutcome(rawValue: try fields.string("outcome", required: true)!) else {
                throw .invalidField("\"outcome\" must be \"verified\" or \"failed\"")
            }
            return outcome
        }) else { return }
        c.gate.verify(phone, purpose: purpose, outcome: outcome) { result in
            switch result {
            case .success(let verification):
                if verification.outcome == .verified { c.worker.metrics.callingCodes.addVerification(callingCode: phone.countryCode) }
                c.respond(status: 200) { verification.writeJSON(to: &$0) }
            case .failure(let error):
                c.respond(error, purpose: purpose)
            }
        }
    }
}
