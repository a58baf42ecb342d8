import ResendGate
import Testing

/// How a `client_ip` is counted by the per-IP limits (issue 34, finding 4): an IPv4 address
/// written in any of IPv6's forms that carry one is that IPv4 address; `::` and `::1` are not.
@Suite("Client addresses")
struct ClientAddressTests {
    /// Every spelling of 203.0.113.7 the gate folds.
    static let spellingsOf203_0_113_7 = [
        "203.0.113.7", "::ffff:203.0.113.7", "::FFFF:cb00:7107", "0:0:0:0:0:ffff:cb00:7107",
        "::203.0.113.7", "::cb00:7107", "0:0:0:0:0:0:cb00:7107",
        "64:ff9b::203.0.113.7", "64:ff9b::cb00:7107", "0064:FF9B:0:0:0:0:cb00:7107",
        "2002:cb00:7107::", "2002:cb00:7107::1", "2002:cb00:7107:5::9", "2002:CB00:7107:ffff:1:2:3:4",
    ]

    @Test(arguments: spellingsOf203_0_113_7)
    func anIPv4AddressWrittenAsIPv6CountsAsItself(spelling: String) {
        #expect(ClientAddress(spelling)?.text == "203.0.113.7")
    }

    /// The unspecified address and loopback are no IPv4 clients 0.0.0.0 and 0.0.0.1, nor
    /// is any other address whose embedded IPv4 could not be a source.
    @Test(arguments: [
        ("::", "::/64"), ("::1", "::/64"), ("::0.0.0.9", "::/64"), ("::0.255.255.255", "::/64"),
        ("::224.0.0.1", "::/64"), ("::255.255.255.255", "::/64"),
        ("64:ff9b::", "64:ff9b::/64"), ("64:ff9b::0.0.0.1", "64:ff9b::/64"), ("64:ff9b::239.1.2.3", "64:ff9b::/64"),
        ("2002::1", "2002::/64"), ("2002:e000:1::", "2002:e000:1::/64"),
    ])
    func implausibleEmbeddedAddressesStayIPv6(spelling: String, counted: String) {
        #expect(ClientAddress(spelling)?.text == counted)
    }

    /// Near misses of each prefix are ordinary IPv6 addresses, counted by their /64.
    @Test(arguments: [
        ("64:ff9b:1::203.0.113.7", "64:ff9b:1::/64"),  // RFC 8215's local-use prefix: the operator's
        ("64:ff9b::1:cb00:7107", "64:ff9b::/64"),  // bits 64-95 not zero: not the /96
        ("1:0:0:0:0:0:cb00:7107", "1::/64"),
        ("2003:cb00:7107::1", "2003:cb00:7107::/64"),
        ("::fffe:203.0.113.7", "::/64"),
        ("2001:db8:1:2:ffff:eeee:dddd:cccc", "2001:db8:1:2::/64"),
    ])
    func otherAddressesCountByTheirSlash64(spelling: String, counted: String) {
        #expect(ClientAddress(spelling)?.text == counted)
    }

    @Test func plainIPv4AddressesAreKeptEvenWhenImplausible() {
        // An IPv4-mapped address is IPv4 whatever it holds, as before.
        #expect(ClientAddress("::ffff:0.0.0.1")?.text == "0.0.0.1")
        #expect(ClientAddress("0.0.0.0")?.text == "0.0.0.0")
        #expect(ClientAddress("::ffff:203.0.113.7\u{0}x") == nil)
    }
}
