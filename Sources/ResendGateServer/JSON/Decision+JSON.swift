import ResendGate

extension Decision {
    /// The decision as the HTTP API and the command line print it (docs/API.md);
    /// `countdownToken` overrides the decision's own token.
    public func writeJSON(to json: inout JSONWriter, countdownToken: String? = nil) {
        json.beginObject()
        json.field("allowed", allowed)
        if let reason { json.field("reason", reason.rawValue) }
        json.field("phone", phone.e164)
        json.field("purpose", purpose.name)
        json.field("retry_after", retryAfter)
        json.field("retry_after_ms", retryAfterMilliseconds)
        json.key("resend_at"); json.timestamp(millisecondsSince1970: resendAtMilliseconds)
        json.key("server_time"); json.timestamp(millisecondsSince1970: serverTimeMilliseconds)
        json.field("next_retry_after", nextRetryAfter)
        json.key("sends_left")
        if let sendsLeft { json.value(Int64(sendsLeft)) } else { json.null() }
        if let token = countdownToken ?? self.countdownToken?.text { json.field("countdown_token", token) }
        if testNumber { json.field("test_number", true) }
        if !observed.isEmpty {
            json.key("observed")
            json.beginArray()
            for rule in observed { json.value(rule.rawValue) }
            json.endArray()
        }
        json.endObject()
    }
}

extension CooldownStatus {
    /// The status as `GET /v1/cooldowns/{phone}` and `resendgate status` print it.
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.field("phone", phone.e164)
        json.field("purpose", purpose.name)
        json.field("active", active)
        json.field("retry_after", retryAfter)
        json.field("retry_after_ms", retryAfterMilliseconds)
        json.key("resend_at")
        if let resendAt = resendAtMilliseconds { json.timestamp(millisecondsSince1970: resendAt) } else { json.null() }
        json.key("server_time"); json.timestamp(millisecondsSince1970: serverTimeMilliseconds)
        json.endObject()
    }
}

extension CountdownReading {
    /// The reading as `GET /v1/countdowns/{token}` prints it: times only, never the number.
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.field("active", true)
        json.field("retry_after", retryAfter)
        json.field("retry_after_ms", retryAfterMilliseconds)
        json.key("resend_at"); json.timestamp(millisecondsSince1970: resendAtMilliseconds)
        json.key("server_time"); json.timestamp(millisecondsSince1970: serverTimeMilliseconds)
        json.endObject()
    }
}

extension VerificationResult {
    /// The result as `POST /v1/verifications` and `resendgate verified|failed` print it.
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.field("phone", phone.e164)
        json.field("purpose", purpose.name)
        json.field("outcome", outcome.rawValue)
        json.key("attempts_left")
        if let attemptsLeft { json.value(Int64(attemptsLeft)) } else { json.null() }
        json.endObject()
    }
}
