#if canImport(Glibc)
import Glibc
#endif

/// A client's IP address as the per-IP limits count it. IPv6 addresses count by their /64
/// prefix (one subscriber usually holds a whole /64, so counting single addresses would let
/// one client rotate through billions); an IPv6 address that carries an IPv4 address
/// counts as that IPv4 address (`IPv4Embedding`), so one client spelled two ways is one.
public struct ClientAddress: Sendable, Hashable, CustomStringConvertible {
    /// The normalised text: `203.0.113.7` or `2001:db8:1:2::/64`.
    public let text: String

    /// Parses an IPv4 or IPv6 address; nil when `text` is neither.
    public init?(_ text: String) {
        // inet_pton reads a C string: a NUL would cut the text short, and
        // "203.0.113.7\u{0}anything" would pass as 203.0.113.7.
        guard !text.isEmpty, text.utf8.count <= 45, !text.utf8.contains(0) else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.text = Self.format(family: AF_INET, &v4)
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        var bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if let embedded = IPv4Embedding.address(in: bytes) {
            var folded = in_addr()
            withUnsafeMutableBytes(of: &folded) { $0.copyBytes(from: embedded) }
            self.text = Self.format(family: AF_INET, &folded)
            return
        }
        for index in 8..<16 { bytes[index] = 0 }
        var prefix = in6_addr()
        withUnsafeMutableBytes(of: &prefix) { $0.copyBytes(from: bytes) }
        self.text = Self.format(family: AF_INET6, &prefix) + "/64"
    }

    public var description: String { text }

    /// `inet_ntop` of an `in_addr` (`AF_INET`) or an `in6_addr` (`AF_INET6`).
    private static func format<Address>(family: Int32, _ address: inout Address) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = withUnsafeBytes(of: &address) { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
