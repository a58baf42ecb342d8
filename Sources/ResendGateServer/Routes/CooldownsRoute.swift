import GateRuntime
import ResendGate

/// `GET` (peek) and `DELETE` (refund) of `/v1/cooldowns/{phone}?purpose=P`. A refund past
/// `max refunds` is 429 `refund_limit` (`Retry-After`: when the oldest leaves the window);
/// with `max refunds` 0, 403 `forbidden`.
enum CooldownsRoute {
    static func peek(_ c: Exchange) {
        guard let (phone, purpose) = c.decoded({ () throws(APIError) in try target(c) }) else { return }
        c.gate.peek(phone, purpose: purpose) { result in
            switch result {
            case .success(let status): c.respond(status: 200) { status.writeJSON(to: &$0) }
            case .failure(let error): c.respond(APIError(error))
            }
        }
    }

    static func release(_ c: Exchange) {
        guard let (phone, purpose) = c.decoded({ () throws(APIError) in try target(c) }) else { return }
        c.gate.release(phone, purpose: purpose) { result in
            switch result {
            case .success: c.respond(status: 204, body: [])
            case .failure(let error): c.respond(error, purpose: purpose)
            }
        }
    }

    /// The number of the path (an encoded slash, %2F, is a separator of it) and the query's purpose.
    private static func target(_ c: Exchange) throws(APIError) -> (PhoneNumber, Purpose) {
        guard let phone = PercentDecoding.decode(c.parameter) else {
            throw .invalidPhone("the phone number in the path is not valid percent-encoding")
        }
        let purpose = try PercentDecoding.queryValue("purpose", in: c.query)
        return try c.target(phone: phone, region: try PercentDecoding.queryValue("region", in: c.query), purpose: purpose)
    }
}
