import ResendGate

/// `POST /v1/checks`: is the code the user typed the number's live issued code? 200
/// `valid` once; 422 `wrong_code` with `attempts_left`; with no live code, 409
/// `code_locked` or `code_used`, 429 `locked`, 410 `code_expired` or `code_voided`.
enum ChecksRoute {
    static func post(_ c: Exchange) {
        guard let (phone, purpose, code) = c.numberBody({ fields throws(APIError) in
            let code = try fields.string("code", required: true)!
            guard IssuedCodes.isWellFormed(Substring(code)) else { throw .invalidField("\"code\" must be 4 to 10 digits") }
            return code
        }) else { return }
        c.gate.check(phone, purpose: purpose, code: code) { result in
            switch result {
            case .success(let check):
                if !check.testNumber { c.worker.metrics.callingCodes.addVerification(callingCode: phone.countryCode) }
                c.respond(status: 200, headers: [("Cache-Control", "no-store")]) { check.writeJSON(to: &$0) }
            case .failure(let error):
                c.respond(error, purpose: purpose, headers: [("Cache-Control", "no-store")])
            }
        }
    }
}
