import GateRuntime

extension Worker {
    /// Who the request authenticated as when it may use a route of `access`: the caller
    /// identity its idempotency keys are scoped to ("" without keys or on an open route).
    /// Otherwise answers it, 401 `unauthorized` (no valid key) or 403 `forbidden` (a valid
    /// key without the route's scope), and returns nil.
    func authorize(_ exchange: Exchange, _ access: Route.Access) -> String? {
        guard case .key(let scope) = access else { return "" }
        guard let grant = grant(exchange) else {
            respond(exchange, error: .unauthorized, headers: Self.challenge)
            return nil
        }
        guard grant.scopes.contains(scope) else {
            respond(exchange, error: .forbidden(scope))
            return nil
        }
        return grant.caller
    }

    private static let challenge = [("WWW-Authenticate", "Bearer realm=\"resendgate\"")]

    /// Every scope when no keys are configured; else the scopes of the key the request
    /// carries as `Authorization: Bearer <key>`, nil for none or an unknown one. Keys are
    /// compared in constant time, and every key is compared, so timing reveals neither a
    /// key nor which one matched.
    private func grant(_ exchange: Exchange) -> (scopes: APIScopes, caller: String)? {
        guard !shared.apiKeys.isEmpty else { return (.all, "") }
        guard let header = exchange.request.header("Authorization") else { return nil }
        let bytes = Array(header.utf8)
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
