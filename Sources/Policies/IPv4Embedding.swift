/// The IPv6 forms that carry an IPv4 address, which the per-IP limits count as that IPv4
/// address (issue 34, finding 4: each form got a bucket of its own, so one client had as
/// many allowances as it had spellings):
///
/// - IPv4-mapped, `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2);
/// - IPv4-compatible, `::a.b.c.d` or `::AABB:CCDD` (RFC 4291 §2.5.5.1, deprecated);
/// - NAT64's well-known prefix, `64:ff9b::a.b.c.d` (RFC 6052 §2.1);
/// - 6to4, `2002:AABB:CCDD::/48` (RFC 3056 §2): the whole /48 is the site of that IPv4.
///
/// An IPv4-mapped address is an IPv4 address whatever it holds. The other forms are folded
/// only when they carry a plausible unicast source: an embedded address in `0.0.0.0/8`
/// (which holds `::` and `::1`, never IPv4 clients) or in `224.0.0.0/3` (multicast,
/// reserved, broadcast) leaves the address an IPv6 /64, as any other.
enum IPv4Embedding {
    /// The four bytes of the IPv4 address that `bytes` (an IPv6 address, 16 bytes) carries,
    /// or nil when it carries none (or an implausible one).
    static func address(in bytes: [UInt8]) -> ArraySlice<UInt8>? {
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12..<16]  // IPv4-mapped: an IPv4 address whatever it holds
        }
        let embedded: ArraySlice<UInt8>
        if bytes[0..<12].allSatisfy({ $0 == 0 }) {
            embedded = bytes[12..<16]  // IPv4-compatible
        } else if bytes[0..<4] == [0x00, 0x64, 0xFF, 0x9B] && bytes[4..<12].allSatisfy({ $0 == 0 }) {
            embedded = bytes[12..<16]  // NAT64, 64:ff9b::/96
        } else if bytes[0] == 0x20 && bytes[1] == 0x02 {
            embedded = bytes[2..<6]  // 6to4, 2002::/16
        } else {
            return nil
        }
        return isPlausibleUnicast(embedded.first!) ? embedded : nil
    }

    /// Whether an IPv4 address whose first byte is `first` can be a client's source:
    /// not `0.0.0.0/8` ("this network") nor `224.0.0.0/3`.
    private static func isPlausibleUnicast(_ first: UInt8) -> Bool { first != 0 && first < 224 }
}
