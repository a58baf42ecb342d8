import RedisClient

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

extension GateKeys {
    /// The hash tag of a prefix's counts for `purpose` (`login:+447911`): their slot.
    public func prefixSlotKey(purpose: Purpose, prefix: PrefixKey) -> String {
        purpose.name + ":" + prefix.text
    }

    /// `prefix:pump:{purpose:+447911}`: a prefix's sends and verifications per bucket of
    /// the window (`pumping.lua`).
    public func pumping(purpose: Purpose, prefix: PrefixKey) -> String {
        var text = ""
        spellPumping(purpose: purpose, prefix: prefix) { text += $0 }
        return text
    }

    /// Appends `pumping(purpose:prefix:)` as one argument, without making a string of it
    /// first (it is built for every guarded send).
    func appendPumping(purpose: Purpose, prefix: PrefixKey, to args: inout RedisArguments) {
        spellPumping(purpose: purpose, prefix: prefix) { args.appendPart($0) }
        args.endArgument()
    }

    /// The one spelling of a prefix's counts key, part by part (its hash tag is
    /// `prefixSlotKey`).
    private func spellPumping(purpose: Purpose, prefix: PrefixKey, _ part: (String) -> Void) {
        part(self.prefix)
        part(":pump:{")
        part(purpose.name)
        part(":")
        part(prefix.text)
        part("}")
    }

    /// `prefix:pump:blocked`: the prefixes found blocked, by when (a sorted set of
    /// `purpose:+447911` members, trimmed to the longest pumping window and to
    /// `PumpingRegistry.capacity` members). Only the listing reads it.
    public var blockedPrefixes: String { prefix + ":pump:blocked" }
}
