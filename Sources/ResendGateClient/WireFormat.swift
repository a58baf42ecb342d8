import Countdown
import Foundation

/// The API's JSON, as sent; turned into the public types with their receipts.
enum WireFormat {
    struct DecisionBody: Decodable {
        let allowed: Bool
        let reason: String?
        let phone: String
        let purpose: String
        let retry_after: Int64
        let retry_after_ms: Int64
        let resend_at: String
        let server_time: String
        /// Absent from a fail-open answer (`"store": "unavailable"`).
        let next_retry_after: Int64?
        let sends_left: Int64?
        let countdown_token: String?
        let test_number: Bool?
        let observed: [String]?
        let store: String?
        /// Issued codes: only a back end's answer carries them.
        let code: String?
        let code_expires_at: String?
        let code_expires_in_ms: Int64?
        let code_countdown_token: String?
    }

    /// Just enough of a 429 to tell a send decision from an error.
    struct AllowedProbe: Decodable {
        let allowed: Bool?
    }

    struct CooldownBody: Decodable {
        let phone: String
        let purpose: String
        let active: Bool
        let retry_after: Int64
        let retry_after_ms: Int64
        let resend_at: String?
        let server_time: String
    }

    struct CountdownBody: Decodable {
        let active: Bool
        let retry_after: Int64
        let retry_after_ms: Int64
        let resend_at: String
        let server_time: String
    }

    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            let code: String
            let message: String
            let retry_after_ms: Int64?
            let retry_after: Int64?
            let attempts_left: Int?
        }
        let error: Detail
    }

    /// A `tick` or `done` event's data.
    struct TickBody: Decodable {
        let retry_after: Int64
        let retry_after_ms: Int64
        let reason: String?
    }

    static func decode<Body: Decodable>(_ type: Body.Type, _ data: Data, status: Int) throws(ResendGateError) -> Body {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw ResendGateError(code: ResendGateError.invalidResponse,
                                  message: "unexpected \(Body.self) JSON: \(error)", status: status)
        }
    }

    static func date(_ text: String, status: Int) throws(ResendGateError) -> Date {
        do {
            return try CountdownDeadline.parse(text, timeZone: TimeZone(secondsFromGMT: 0)!)
        } catch {
            throw ResendGateError(code: ResendGateError.invalidResponse, message: "not a date-time: \(text)", status: status)
        }
    }

    static func decision(_ data: Data, status: Int, receipt: ServerReceipt) throws(ResendGateError) -> Decision {
        let body = try decode(DecisionBody.self, data, status: status)
        return Decision(
            allowed: body.allowed, reason: body.reason.map(Decision.Reason.init(rawValue:)),
            phone: body.phone, purpose: body.purpose, retryAfter: body.retry_after,
            retryAfterMilliseconds: body.retry_after_ms, resendAt: try date(body.resend_at, status: status),
            serverTime: try date(body.server_time, status: status), nextRetryAfter: body.next_retry_after,
            sendsLeft: body.sends_left, countdownToken: body.countdown_token, testNumber: body.test_number ?? false,
            observed: (body.observed ?? []).map(Decision.Reason.init(rawValue:)), recorded: body.store != "unavailable",
            issuedCode: try issuedCode(body, status: status, receipt: receipt), receipt: receipt)
    }

    private static func issuedCode(_ body: DecisionBody, status: Int, receipt: ServerReceipt) throws(ResendGateError) -> IssuedCode? {
        guard let expiresAt = body.code_expires_at, let expiresIn = body.code_expires_in_ms else { return nil }
        return IssuedCode(code: body.code, expiresAt: try date(expiresAt, status: status), expiresInMilliseconds: expiresIn,
                          countdownToken: body.code_countdown_token, serverTime: try date(body.server_time, status: status),
                          receipt: receipt)
    }

    /// Whether a 429's body is a send decision (it has `allowed`), not an error.
    static func isDecision(_ data: Data) -> Bool {
        (try? JSONDecoder().decode(AllowedProbe.self, from: data))?.allowed != nil
    }

    struct CheckBody: Decodable {
        let phone: String
        let purpose: String
        let valid: Bool
    }

    static func check(_ data: Data, status: Int) throws(ResendGateError) -> CodeCheckResult {
        let body = try decode(CheckBody.self, data, status: status)
        guard body.valid else {
            throw ResendGateError(code: ResendGateError.invalidResponse, message: "a 200 check that is not valid", status: status)
        }
        return CodeCheckResult(phone: body.phone, purpose: body.purpose)
    }

    static func cooldown(_ data: Data, status: Int, receipt: ServerReceipt) throws(ResendGateError) -> CooldownStatus {
        let body = try decode(CooldownBody.self, data, status: status)
        var resendAt: Date?
        if let text = body.resend_at { resendAt = try date(text, status: status) }
        return CooldownStatus(
            phone: body.phone, purpose: body.purpose, active: body.active, retryAfter: body.retry_after,
            retryAfterMilliseconds: body.retry_after_ms, resendAt: resendAt,
            serverTime: try date(body.server_time, status: status), receipt: receipt)
    }

    static func countdown(_ data: Data, status: Int, receipt: ServerReceipt) throws(ResendGateError) -> CountdownStatus {
        let body = try decode(CountdownBody.self, data, status: status)
        return CountdownStatus(
            active: body.active, retryAfter: body.retry_after, retryAfterMilliseconds: body.retry_after_ms,
            resendAt: try date(body.resend_at, status: status), serverTime: try date(body.server_time, status: status),
            receipt: receipt)
    }

    struct VerificationBody: Decodable {
        let phone: String
        let purpose: String
        let outcome: String
        let attempts_left: Int?
    }

    static func verification(_ data: Data, status: Int) throws(ResendGateError) -> VerificationReport {
        let body = try decode(VerificationBody.self, data, status: status)
        guard let outcome = VerificationOutcome(rawValue: body.outcome) else {
            throw ResendGateError(code: ResendGateError.invalidResponse, message: "unknown outcome \(body.outcome)", status: status)
        }
        return VerificationReport(phone: body.phone, purpose: body.purpose, outcome: outcome, attemptsLeft: body.attempts_left)
    }

    /// The error an answer of `status` carries: its JSON `error` (code, wait, attempts left),
    /// or, from a back end or gateway that answers in its own words, `rate_limited` for a 429
    /// and `http_error` for anything else; the wait from the body, else from `Retry-After`.
    static func error(_ data: Data, status: Int, retryAfterHeader: String? = nil) -> ResendGateError {
        let headerWait = retryAfterHeader.flatMap(retryAfter(header:))
        if let body = try? JSONDecoder().decode(ErrorBody.self, from: data) {
            let detail = body.error
            let wait = detail.retry_after_ms.map { Duration.milliseconds($0) }
                ?? detail.retry_after.map { Duration.seconds($0) } ?? headerWait
            return ResendGateError(code: .init(rawValue: detail.code), message: detail.message, status: status,
                                   retryAfter: wait, attemptsLeft: detail.attempts_left)
        }
        let code = status == 429 ? ResendGateError.rateLimited : ResendGateError.httpError
        return ResendGateError(code: code, message: "HTTP \(status) without an API error body", status: status,
                               retryAfter: headerWait)
    }

    /// `Retry-After`: delay-seconds, or an HTTP date (its distance from now, at least 0).
    static func retryAfter(header: String) -> Duration? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: text) else { return nil }
        return .seconds(max(0, Int64(date.timeIntervalSinceNow.rounded(.up))))
    }
}
