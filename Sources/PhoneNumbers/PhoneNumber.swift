import CPhoneNumber
import Synchronization

/// A phone number in canonical E.164 form, the identity of a cooldown.
///
/// Every spelling of one number (`+86 138 0013 8000`, `008613800138000`,
/// `tel:+86-138-0013-8000`, full-width digits, or a national number with a default
/// region) parses to the same value, so a caller cannot dodge a cooldown by
/// respelling the number.
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number in E.164, such as `+8613800138000`.
    public let e164: String
    /// The region the number belongs to (`CN`), or `001` for non-geographic numbers.
    public let region: String
    /// What kind of line the number is, as libphonenumber's metadata says.
    public let type: PhoneNumberType
    /// The country calling code (`86`).
    public let countryCode: Int

    public var description: String { e164 }

    /// Whether libphonenumber knows `code` as a region (`CN`, `GB`).
    ///
    /// Answers are remembered: the C call copies libphonenumber's ~245 regions into a
    /// fresh `std::set` each time, which cost about a third of the CPU of every uncached
    /// parse (this check runs before each one). Two ASCII letters make at most 676 entries.
    public static func isKnownRegion(_ code: String) -> Bool {
        let bytes = code.utf8
        guard bytes.count == 2 else { return false }
        guard bytes.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0 & 0xDF) }) else {
            return rg_phone_is_known_region(code) == 1
        }
        if let known = knownRegions.withLock({ $0[code] }) { return known }
        let known = rg_phone_is_known_region(code) == 1
        knownRegions.withLock { $0[code] = known }
        return known
    }

    private static let knownRegions = Mutex<[String: Bool]>([:])
}

// In an extension, so that the parser keeps the memberwise init of the struct.
extension PhoneNumber {
    /// Parses `text` with libphonenumber, using `defaultRegion` (two letters) for a
    /// number written without a country code. Results are cached.
    public init(parsing text: String, defaultRegion: String? = nil) throws(PhoneNumberError) {
        self = try PhoneNumberParser.shared.parse(text, defaultRegion: defaultRegion)
    }
}

/// A number's line type, as libphonenumber classifies it.
public enum PhoneNumberType: String, Sendable, CaseIterable, Codable {
    case fixedLine = "fixed_line"
    case mobile
    case fixedLineOrMobile = "fixed_line_or_mobile"
    case tollFree = "toll_free"
    case premiumRate = "premium_rate"
    case sharedCost = "shared_cost"
    case voip
    case personalNumber = "personal_number"
    case pager
    case uan
    case voicemail
    case unknown

    /// The shim's `rg_phone_type`, whose values number the cases above in their order.
    init(cValue: Int32) {
        self = Self.all.indices.contains(Int(cValue)) ? Self.all[Int(cValue)] : .unknown
    }

    private static let all = allCases
}
