extension Worker {
    /// True when the request may use a route that needs `scope`. Otherwise answers it,
    /// 401 `unauthorized` (no valid key) or 403 `forbidden` (a valid key without that
    /// scope), and returns false.
    func permits(_ exchange: Exchange, _ scope: APIScopes) -> Bool {
        guard let granted = grantedScopes(exchange) else {
            respond(exchange, error: .unauthorized, headers: Self.challenge)
            return false
        }
        guard granted.contains(scope) else {
            respond(exchange, error: .forbidden(scope))
            return false
        }
        return true
    }

    /// Every scope when no keys are configured; else the scopes of the key the request
    /// carries as `Authorization: Bearer <key>`, nil for none or an unknown one. Keys are
    /// compared in constant time, and every key is compared, so timing reveals neither a
    /// key nor which one matched.
    func grantedScopes(_ exchange: Exchange) -> APIScopes? {
        guard !shared.apiKeys.isEmpty else { return .all }
        guard let header = exchange.request.header("Authorization") else { return nil }
        let bytes = Array(header.utf8)
        let scheme = Array("Bearer ".utf8)
        guard bytes.count > scheme.count,
              bytes[..<scheme.count].map({ $0 | 0x20 }) == scheme.map({ $0 | 0x20 }) else { return nil }
        let presented = bytes[scheme.count...]
        var matched = false
        var scopes: APIScopes = []
        for key in shared.apiKeys where Self.constantTimeEquals(presented, key.secret) {
            matched = true
            scopes.formUnion(key.scopes)
        }
        return matched ? scopes : nil
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
