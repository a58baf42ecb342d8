/// A destination prefix, the unit the SMS-pumping guard judges: the calling code plus
/// the first `digits` national digits of a number (`+447911` for `+447911123456` with 4),
/// and never more than all but its last `hiddenDigits`: a prefix is never a whole
/// subscriber number (Tokelau's `+6907290` has four national digits; its prefix is
/// `+69072`), so its keys name no phone number, also with `--key-secret`.
public struct PrefixKey: Sendable, Hashable, CustomStringConvertible {
    /// `+447911`.
    public let text: String
    /// The country calling code (`44`).
    public let callingCode: Int

    /// National digits a prefix always leaves out: a hundred numbers share the shortest.
    public static let hiddenDigits = 2

    /// The prefix of `phone` with `digits` national digits, or all but `hiddenDigits`.
    public init(_ phone: PhoneNumber, digits: Int) {
        let codeLength = String(phone.countryCode).utf8.count
        let national = phone.e164.utf8.count - 1 - codeLength
        text = String(phone.e164.utf8.prefix(1 + codeLength + max(0, min(digits, national - Self.hiddenDigits))))!
        callingCode = phone.countryCode
    }

    /// A prefix as the registry of blocked prefixes names it; nil unless it is `+` and
    /// digits whose calling code is `callingCode`'s first digits.
    init?(text: String, callingCode: Int) {
        guard text.utf8.first == UInt8(ascii: "+"), text.utf8.count >= 2, text.utf8.count <= 16,
              text.utf8.dropFirst().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              text.dropFirst().hasPrefix(String(callingCode)) else { return nil }
        self.text = text
        self.callingCode = callingCode
    }

    public var description: String { text }
}
