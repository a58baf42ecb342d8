@testable import ResendGateServer
import ResendGate
import Testing

/// Every error the API can give, with its wire code and status: the one mapping in
/// `APIError` keeps the codes deploy/openapi.yaml lists and the statuses it documents.
@Suite("APIError: codes and statuses")
struct APIErrorTests {
    static let gateErrors: [GateError] = [
        .invalidPhone(.tooShort), .invalidPurpose("p"), .invalidField("f"), .regionNotAllowed("US"),
        .numberTypeNotAllowed(.premiumRate), .idempotencyKeyReused,
        .refundLimit(retryAfterMilliseconds: 1_500, maxRefunds: 1), .refundsDisabled, .storeUnavailable("down"),
        .locked(retryAfterMilliseconds: 900_000), .noCodeSent, .codeLocked(retryAfterMilliseconds: 0, maxFailedChecks: 5),
        .wrongCode(attemptsLeft: 2), .codeExpired, .codeUsed, .codeVoided, .codesNotIssued, .codesIssued,
        .storeEvictsKeys("volatile-lru"),
    ]

    static let httpErrors: [APIError] = [
        .invalidJSON("j"), .missingField("m"), .badRequest("b"), .unauthorized, .notFound("/x"),
        .methodNotAllowed("GET"), .bodyTooLarge("b"), .unsupportedMediaType("u"), .misdirectedRequest("m"),
        .headerTooLarge("h"), .invalidPhone("p"), .invalidField("f"), .forbidden("f"), .storeUnavailable("s"),
    ]

    @Test func everyCodeHasItsDocumentedStatus() {
        let expected: [String: Int] = [
            "invalid_json": 400, "invalid_phone": 400, "invalid_purpose": 400, "missing_field": 400,
            "invalid_field": 400, "bad_request": 400, "unauthorized": 401, "forbidden": 403,
            "region_not_allowed": 403, "number_type_not_allowed": 403, "not_found": 404, "method_not_allowed": 405,
            "body_too_large": 413, "unsupported_media_type": 415, "misdirected_request": 421,
            "idempotency_key_reused": 422, "refund_limit": 429, "locked": 429, "no_code_sent": 409, "code_locked": 409, "header_too_large": 431,
            "wrong_code": 422, "code_expired": 410, "code_used": 409, "code_voided": 410, "codes_not_issued": 409, "codes_issued": 409, "store_unavailable": 503,
            "store_evicts_keys": 503,
        ]
        let all = Self.gateErrors.map(APIError.init) + Self.httpErrors
        for error in all { #expect(expected[error.code] == error.status, "\(error.code) → \(error.status)") }
        #expect(Set(all.map(\.code)) == Set(expected.keys))
        // Every gate kind is reachable, keeps its code, and a gate error keeps its retry time.
        #expect(Set(Self.gateErrors.map(\.kind)) == Set(GateError.Kind.allCases))
        for error in Self.gateErrors { #expect(APIError(error).code == error.code) }
        #expect(APIError(Self.gateErrors[6]).retryAfterMilliseconds == 1_500)
    }

    @Test func policyDenialsAndBadInputAreClassifiedByKind() {
        let denials = Self.gateErrors.filter(\.isPolicyDenial).map(\.code)
        #expect(Set(denials) == [
            "region_not_allowed", "number_type_not_allowed", "refund_limit", "locked", "code_locked", "forbidden", "wrong_code",
            "code_expired", "code_used", "code_voided",
        ])
        #expect(APIError(.wrongCode(attemptsLeft: 2)).attemptsLeft == 2)
        #expect(Self.gateErrors.filter { !$0.isBadInput }.map(\.code) == ["store_unavailable", "store_evicts_keys"])
        #expect(PhoneNumberError.tooShort == .tooShort && PhoneNumberError.tooShort != .tooLong)
        #expect(PhoneNumberError.invalidDefaultRegion("XX") != .invalidDefaultRegion("YY"))
        #expect(PhoneNumberError.invalidDefaultRegion("XX").code == "invalid_default_region")
        #expect(PhoneNumberError.invalidDefaultRegion("XX").description.contains("\"XX\""))
    }
}
