import GateRuntime

extension Worker {
    /// The caller identity its idempotency keys belong to ("" without keys or on an open
    /// route) when the request may use a route of `access`; else nil, once answered 401
    /// `unauthorized` (no valid key) or 403 `forbidden` (a key without the route's scope).
    func authorize(_ exchange: Exchange, _ access: Route.Access) -> String? {
        guard case .key(let scope) = access else { return "" }
        guard let grant = grant(exchange) else {
            exchange.respond(.unauthorized, headers: [("WWW-Authenticate", "Bearer realm=\"resendgate\"")])
            return nil
        }
        guard grant.scopes.contains(scope) else {
            exchange.respond(.forbidden(scope))
            return nil
        }
        return grant.caller
    }

    /// Every scope when no keys are configured; else those of the request's `Authorization:
    /// Bearer <key>`, nil for none or an unknown one. Every key is compared, in constant
    /// time, so timing reveals neither a key nor which one matched.
    private func grant(_ exchange: Exchange) -> (scopes: APIScopes, caller: String)? {
        guard !shared.apiKeys.isEmpty else { return (.all, "") }
        guard let bytes = exchange.request.withHeader("Authorization", { Array($0) }) else { return nil }
        let scheme = "Bearer ".utf8
        guard bytes.count > scheme.count, bytes.prefix(scheme.count).equalsIgnoringASCIICase(scheme) else { return nil }
        let presented = bytes[scheme.count...]
        var caller: String?
        var scopes: APIScopes = []
        for key in shared.apiKeys where constantTimeEquals(presented, key.secret) {
            caller = key.caller
            scopes.formUnion(key.scopes)
        }
        return caller.map { (scopes, $0) }
    }
}
