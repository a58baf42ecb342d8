extension Worker {
    /// True when no keys are configured, or the request carries one of them as
    /// `Authorization: Bearer <key>`. Keys are compared in constant time, and every
    /// key is compared, so timing reveals neither a key nor which one matched.
    func authorized(_ exchange: Exchange) -> Bool {
        guard !shared.apiKeys.isEmpty else { return true }
        guard let header = exchange.request.header("Authorization") else { return false }
        let bytes = Array(header.utf8)
        let scheme = Array("Bearer ".utf8)
        guard bytes.count > scheme.count,
              bytes[..<scheme.count].map({ $0 | 0x20 }) == scheme.map({ $0 | 0x20 }) else { return false }
        let presented = bytes[scheme.count...]
        var matched = false
        for key in shared.apiKeys where Self.constantTimeEquals(presented, key) { matched = true }
        return matched
    }

    static func constantTimeEquals(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        let length = max(a.count, b.count)
        for offset in 0..<length {
            let x = offset < a.count ? a[a.startIndex + offset] : 0
            let y = offset < b.count ? b[offset] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
