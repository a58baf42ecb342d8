import ResendGate

extension Decision {
    /// The decision as the API and the command line print it; an issued code's digits only
    /// when `showingCode` (never to a browser).
    public func writeJSON(to json: inout JSONWriter, showingCode: Bool = false) {
        json.beginObject()
        json.field("allowed", allowed)
        if let reason { json.field("reason", reason.rawValue) }
        json.field("phone", phone.e164)
        json.field("purpose", purpose.name)
        WaitEncoding.write(retryAfterMilliseconds, end: "resend_at", serverTime: serverTimeMilliseconds, to: &json)
        json.field("next_retry_after", nextRetryAfter)
        json.key("sends_left")
        if let sendsLeft { json.value(Int64(sendsLeft)) } else { json.null() }
        if let countdownToken { json.field("countdown_token", countdownToken.text) }
        if testNumber { json.field("test_number", true) }
        if let issuedCode {
            if showingCode { json.field("code", issuedCode.code) }
            json.key("code_expires_at"); json.timestamp(millisecondsSince1970: issuedCode.expiresAtMilliseconds)
            json.field("code_expires_in_ms", max(0, issuedCode.expiresAtMilliseconds - serverTimeMilliseconds))
            json.field("code_resent", issuedCode.resent)
            if let token = issuedCode.countdownToken { json.field("code_countdown_token", token.text) }
        }
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
        WaitEncoding.write(retryAfterMilliseconds, end: "resend_at", serverTime: serverTimeMilliseconds, runs: active, to: &json)
        json.endObject()
    }
}

extension CountdownReading {
    /// The reading as `GET /v1/countdowns/{token}` prints it: times only, never the number.
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.field("active", true)
        WaitEncoding.write(retryAfterMilliseconds, end: "resend_at", serverTime: serverTimeMilliseconds, to: &json)
        json.endObject()
    }
}

extension CodeCheck {
    /// The result as `POST /v1/checks` and `resendgate check` print it: a right code.
    public func writeJSON(to json: inout JSONWriter) {
        json.beginObject()
        json.field("phone", phone.e164)
        json.field("purpose", purpose.name)
        json.field("valid", true)
        if testNumber { json.field("test_number", true) }
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
