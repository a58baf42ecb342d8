/// Why a text is not accepted as a phone number. Compare with the static members
/// (`error == .tooShort`); `code` is a stable, machine-readable reason.
public struct PhoneNumberError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, Hashable {
        case empty
        case notANumber = "not_a_number"
        case tooShort = "too_short"
        case tooLong = "too_long"
        case invalidForRegion = "invalid_for_region"
        case invalidCountryCode = "invalid_country_code"
        case missingRegion = "missing_region"
        case invalidDefaultRegion = "invalid_default_region"
        case tooManyCharacters = "too_many_characters"
    }

    private let reason: Code
    /// For `invalid_default_region`: the region that is not known.
    private let region: String?

    private init(_ reason: Code, region: String? = nil) {
        self.reason = reason
        self.region = region
    }

    public static let empty = PhoneNumberError(.empty)
    public static let notANumber = PhoneNumberError(.notANumber)
    public static let tooShort = PhoneNumberError(.tooShort)
    public static let tooLong = PhoneNumberError(.tooLong)
    public static let invalidForRegion = PhoneNumberError(.invalidForRegion)
    public static let invalidCountryCode = PhoneNumberError(.invalidCountryCode)
    /// A national number with no default region to read it in.
    public static let missingRegion = PhoneNumberError(.missingRegion)
    /// Longer than `PhoneNumberParser.maximumInputBytes`: refused before libphonenumber sees it.
    public static let tooManyCharacters = PhoneNumberError(.tooManyCharacters)
    /// The configured default region is not a region libphonenumber knows.
    public static func invalidDefaultRegion(_ region: String) -> PhoneNumberError {
        PhoneNumberError(.invalidDefaultRegion, region: region)
    }

    /// A stable, machine-readable reason (`too_short`, `missing_region`, ...).
    public var code: String { reason.rawValue }

    public var description: String {
        switch reason {
        case .empty: "the phone number is empty"
        case .notANumber: "the text is not a phone number"
        case .tooShort: "the phone number is too short"
        case .tooLong: "the phone number is too long"
        case .invalidForRegion: "the phone number is not a valid number for its region"
        case .invalidCountryCode: "the phone number has an unknown country code"
        case .missingRegion:
            "the phone number has no country code and no default region is set (write it with +CC, or give the gate a default region)"
        case .invalidDefaultRegion: "the default region \"\(region ?? "")\" is not a known region"
        case .tooManyCharacters: "the phone number is longer than \(PhoneNumberParser.maximumInputBytes) bytes"
        }
    }
}
