import ResendGate

/// What handlers share: reading a request, answering a gate error.
extension Exchange {
    /// What `read` makes of the request, or nil once its error is answered.
    func decoded<T>(_ read: () throws(APIError) -> T) -> T? {
        do { return try read() } catch { respond(error); return nil }
    }

    /// A POST body's number and purpose as the gate reads them, and what `read` takes from
    /// it; nil once an error is answered. Checked in the order phone, purpose, region,
    /// `read`'s, then the number.
    func numberBody<T>(_ read: (JSONFields) throws(APIError) -> T) -> (PhoneNumber, Purpose, T)? {
        decoded { () throws(APIError) in
            let fields = try JSONFields(parsing: worker.bodyBuffer)
            let phone = try fields.string("phone", required: true)!, purpose = try fields.string("purpose")
            let region = try fields.string("region"), other = try read(fields)
            let (number, purposeValue) = try target(phone: phone, region: region, purpose: purpose)
            return (number, purposeValue, other)
        }
    }

    /// The number and purpose (the default one when nil) a request names, as the gate reads them.
    func target(phone: String, region: String?, purpose: String?) throws(APIError) -> (PhoneNumber, Purpose) {
        try APIError.answering { () throws(GateError) in
            (try gate.phone(phone, region: region), try gate.purpose(purpose ?? Purpose.default.name))
        }
    }

    /// A gate error's answer with `headers`; a 429 (`refund_limit`, `locked`) with
    /// `Retry-After` and the `RateLimit` pair too, whose quota is the refunds or the wrong codes a window.
    func respond(_ error: GateError, purpose: Purpose, headers: [(String, String)] = []) {
        guard error.kind == .refundLimit || error.kind == .locked else { return respond(APIError(error), headers: headers) }
        let policy = gate.configuration.policies.policy(for: purpose)
        let quota = error.kind == .locked ? policy.maxFailedChecks : policy.maxRefunds
        respond(APIError(error), headers: headers + WaitEncoding.headers(error.retryAfterMilliseconds ?? 0, limit: error.code, quota: quota))
    }
}
