/// Where a model saves its countdown: a key per purpose and number. The number is not written
/// in clear, but the digest is a plain hash of ~11 digits: anyone who can read the store can
/// find the number by trying them all. It keeps the number out of a casual look at the
/// store (a backup listing, a debug dump), no more: treat the store as holding the number.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension ResendButtonModel {
    /// The key a countdown of `phone` for `purpose` is saved under.
    public static func storageKey(purpose: String, phone: String) -> String {
        "resendgate.countdown.\(purpose).\(numberDigest(phone))"
    }

    /// A stable digest of the number's digits (FNV-1a, 64 bits, in hex): every spelling of
    /// one number gets one key. Not a secret: reversible by brute force (see above).
    static func numberDigest(_ phone: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for scalar in phone.unicodeScalars where scalar.properties.numericType == .decimal {
            guard let digit = scalar.properties.numericValue else { continue }
            hash = (hash ^ (48 + UInt64(digit))) &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
