import Foundation
import ResendGateTestSupport

/// The media type every JSON answer carries (docs/API.md).
let jsonContentType = "application/json; charset=utf-8"

// MARK: - JSON bodies

/// A decision as `POST /v1/sends` returns it. Decoded strictly: a number where a
/// boolean belongs (or the reverse) fails.
struct DecisionBody: Decodable, Equatable {
    let allowed: Bool
    let reason: String?
    let phone: String
    let purpose: String
    let retry_after: Int64
    let retry_after_ms: Int64
    let resend_at: String
    let server_time: String
    let countdown_token: String?
}

/// A cooldown as `GET /v1/cooldowns/{phone}` returns it.
struct CooldownBody: Decodable, Equatable {
    let phone: String
    let purpose: String
    let active: Bool
    let retry_after: Int64
    let retry_after_ms: Int64
    let resend_at: String?
    let server_time: String
}

/// `{"error": {"code": "...", "message": "..."}}`
struct ErrorBody: Decodable, Equatable {
    struct Detail: Decodable, Equatable {
        let code: String
        let message: String
    }
    let error: Detail
}

extension RawHTTPResponse {
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(body))
    }

    /// The top-level member names of a JSON object body.
    func jsonKeys() throws -> Set<String> {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw RawHTTPError.malformed("body is not a JSON object: \(text)")
        }
        return Set(object.keys)
    }

    /// Whether the member `key` of a JSON object body is JSON `null`.
    func jsonIsNull(_ key: String) throws -> Bool {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return false }
        return object[key] is NSNull
    }

    /// The error code of an error body, or nil when the body is not one.
    var errorCode: String? {
        (try? decode(ErrorBody.self))?.error.code
    }
}

// MARK: - RFC 3339

enum RFC3339 {
    /// Milliseconds since 1970 of `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly (UTC, three fraction
    /// digits); nil for any other spelling.
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
              bytes[16] == 0x3A, bytes[19] == 0x2E, bytes[23] == 0x5A else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              let millis = number(20..<23), (1...12).contains(month), (1...31).contains(day), hour < 24,
              minute < 60, second < 61 else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }
}
