import ResendGate

/// `POST /v1/checks`: the back end asks whether the code its user typed is the number's
/// live issued code (a purpose that issues codes). 200 `valid` once for the right code;
/// 422 `wrong_code` with `attempts_left`; 409 `code_locked`, 429 `locked`, 410
/// `code_expired` or `code_voided`, 409 `code_used` when there is no live code to check.
extension Worker {
    func handleCheck(_ exchange: Exchange) {
        guard readJSONBody(exchange) else { return }
        let input: (phone: PhoneNumber, purpose: Purpose, code: String)
        do {
            input = try CheckInput.decode(body: bodyBuffer, gate: gate)
        } catch {
            return respond(exchange, error: error)
        }
        gate.check(input.phone, purpose: input.purpose, code: input.code) { [unowned self] result in
            switch result {
            case .success(let check):
                if !check.testNumber { self.metrics.callingCodes.addVerification(callingCode: input.phone.countryCode) }
                self.respond(exchange, status: 200, headers: [("Cache-Control", "no-store")]) { check.writeJSON(to: &$0) }
            case .failure(let error) where error.kind == .locked:
                self.respondLimited(exchange, error, purpose: input.purpose)
            case .failure(let error):
                self.respond(exchange, error: APIError(error), headers: [("Cache-Control", "no-store")])
            }
        }
    }
}

/// The fields of a `POST /v1/checks` body, validated.
enum CheckInput {
    static func decode(body: [UInt8], gate: GateWorker) throws(APIError) -> (PhoneNumber, Purpose, String) {
        let fields = try SendInput.object(body)
        let phoneText = try SendInput.string(fields, "phone", required: true)!
        let purposeText = try SendInput.string(fields, "purpose", required: false) ?? Purpose.default.name
        let region = try SendInput.string(fields, "region", required: false)
        let code = try SendInput.string(fields, "code", required: true)!
        guard IssuedCodes.isWellFormed(Substring(code)) else { throw .invalidField("\"code\" must be 4 to 10 digits") }
        do throws(GateError) {
            return (try gate.phone(phoneText, region: region), try gate.purpose(purposeText), code)
        } catch {
            throw APIError(error)
        }
    }
}
