#if canImport(Glibc)
import Glibc
#endif

enum IPAddress {
    /// Whether `text` is an IPv4 or IPv6 address in its usual written forms.
    static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= 45 else { return false }
        var buffer = in6_addr()
        return inet_pton(AF_INET, text, &buffer) == 1 || inet_pton(AF_INET6, text, &buffer) == 1
    }
}
