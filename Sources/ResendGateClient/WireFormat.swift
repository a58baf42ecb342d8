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
        let next_retry_after: Int64
        let sends_left: Int64?
        let countdown_token: String?
        let test_number: Bool?
        let observed: [String]?
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
            observed: (body.observed ?? []).map(Decision.Reason.init(rawValue:)), receipt: receipt)
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

    /// The error an answer of `status` carries (its JSON `error.code`, or a generic one).
    static func error(_ data: Data, status: Int) -> ResendGateError {
        if let body = try? JSONDecoder().decode(ErrorBody.self, from: data) {
            return ResendGateError(code: body.error.code, message: body.error.message, status: status)
        }
        return ResendGateError(code: ResendGateError.invalidResponse,
                               message: "HTTP \(status) without an API error body", status: status)
    }
}
