/// Why a text is not accepted as a phone number. Each case has a stable `code`.
public enum PhoneNumberError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case notANumber
    case tooShort
    case tooLong
    case invalidForRegion
    case invalidCountryCode
    case missingRegion
    case invalidDefaultRegion(String)
    case tooManyCharacters

    /// A stable, machine-readable reason.
    public var code: String {
        switch self {
        case .empty: "empty"
        case .notANumber: "not_a_number"
        case .tooShort: "too_short"
        case .tooLong: "too_long"
        case .invalidForRegion: "invalid_for_region"
        case .invalidCountryCode: "invalid_country_code"
        case .missingRegion: "missing_region"
        case .invalidDefaultRegion: "invalid_default_region"
        case .tooManyCharacters: "too_many_characters"
        }
    }

    public var description: String {
        switch self {
        case .empty: "the phone number is empty"
        case .notANumber: "the text is not a phone number"
        case .tooShort: "the phone number is too short"
        case .tooLong: "the phone number is too long"
        case .invalidForRegion: "the phone number is not a valid number for its region"
        case .invalidCountryCode: "the phone number has an unknown country code"
        case .missingRegion:
            "the phone number has no country code and no default region is set (use +CC or --region)"
        case .invalidDefaultRegion(let region): "the default region \"\(region)\" is not a known region"
        case .tooManyCharacters: "the phone number is longer than \(PhoneNumberParser.maximumInputBytes) bytes"
        }
    }
}
