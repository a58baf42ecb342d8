/// One route of the API: the methods it answers, its path, who may call it and its handler.
struct Route: Sendable {
    /// Who may call a route: anyone (the operational routes; countdowns, whose unguessable
    /// token is the credential), or a request whose API key has `scope`.
    enum Access: Equatable, Sendable { case open, key(APIScopes) }

    let methods: [HTTPRequest.Method]
    /// As OpenAPI spells it. A `{parameter}` is one whole segment, never empty; `{parameter?}`
    /// may be empty (`/v1/cooldowns/` is the handler's to refuse, as an invalid number).
    let path: String
    let access: Access
    let handler: @Sendable (Exchange) -> Void
    /// The path's text before and after its parameter; the whole path when it has none.
    private let prefix: Substring, suffix: Substring?, allowsEmpty: Bool

    init(_ methods: [HTTPRequest.Method], _ path: String, _ access: Access, _ handler: @escaping @Sendable (Exchange) -> Void) {
        (self.methods, self.path, self.access, self.handler) = (methods, path, access, handler)
        let open = path.firstIndex(of: "{"), close = path.firstIndex(of: "}")
        prefix = path[..<(open ?? path.endIndex)]
        suffix = close.map { path[path.index(after: $0)...] }
        allowsEmpty = close.map { path[path.index(before: $0)] == "?" } ?? false
    }

    /// The parameter's segment when `path` is this route's ("" for a path without one), else nil.
    /// An encoded slash (%2F) stays inside its segment.
    func match(_ path: Substring) -> Substring? {
        guard let suffix else { return path == prefix ? "" : nil }
        let rest = path.dropFirst(prefix.count)
        guard path.hasPrefix(prefix), rest.hasSuffix(suffix) else { return nil }
        let segment = rest.dropLast(suffix.count)
        return !segment.contains("/") && (allowsEmpty || !segment.isEmpty) ? segment : nil
    }

    /// Every route, with who may call it.
    static let table: [Route] = [
        Route([.post], "/v1/sends", .key(.send), SendsRoute.post),
        Route([.post], "/v1/verifications", .key(.verify), VerificationsRoute.post),
        Route([.post], "/v1/checks", .key(.verify), ChecksRoute.post),
        Route([.get, .head], "/v1/cooldowns/{phone?}", .key(.read), CooldownsRoute.peek),
        Route([.delete], "/v1/cooldowns/{phone?}", .key(.release), CooldownsRoute.release),
        Route([.get, .head], "/v1/prefixes", .key(.read), PrefixesRoute.get),
        Route([.get, .head], "/v1/countdowns/{token}", .open, { CountdownsRoute.get($0, stream: false) }),
        Route([.get], "/v1/countdowns/{token}/events", .open, { CountdownsRoute.get($0, stream: true) }),
        Route([.get, .head], "/healthz", .open, OperationalRoutes.health),
        Route([.get, .head], "/readyz", .open, OperationalRoutes.readiness),
        Route([.get, .head], "/metrics", .open, OperationalRoutes.metrics),
        Route([.get, .head], "/", .open, OperationalRoutes.demoPage),
        Route([.get, .head], "/openapi.yaml", .open, OperationalRoutes.openAPIDocument),
    ]
}

/// The one step before every handler: the browser guard, the route, its method, its
/// API key scope and, for a POST, a JSON body read into `bodyBuffer`.
extension Worker {
    func route(_ exchange: Exchange) {
        if let refusal = browserRefusal(exchange) { return exchange.respond(refusal) }
        var pathIsKnown = false
        for route in Route.table {
            guard let parameter = route.match(exchange.path) else { continue }
            pathIsKnown = true
            guard route.methods.contains(exchange.method) else { continue }
            guard let caller = authorize(exchange, route.access) else { return }
            if exchange.method == .post {
                // No Content-Type is refused too: a page can POST a Blob without one (no-cors).
                guard exchange.request.withHeader("Content-Type", Self.isJSON) == true else {
                    return exchange.respond(.unsupportedMediaType("send the body as JSON with the header Content-Type: application/json"))
                }
                // A body over `maxBodyBytes` never gets here: the framing refuses it (413, `refused`).
                exchange.request.readBody(into: &bodyBuffer)
            }
            var routed = exchange
            (routed.caller, routed.parameter) = (caller, parameter)
            return route.handler(routed)
        }
        guard pathIsKnown else { return exchange.respond(.notFound(exchange.path)) }
        let allowed = Route.table.filter { $0.match(exchange.path) != nil }.flatMap(\.methods).map(\.rawValue).joined(separator: ", ")
        exchange.respond(.methodNotAllowed(allowed), headers: [("Allow", allowed)])
    }

    /// `application/json` with or without parameters, in any case; not `+json` types, not a
    /// form type a page could send without CORS. Over the header's bytes: no String made.
    static func isJSON(_ contentType: UnsafeBufferPointer<UInt8>) -> Bool {
        var mediaType = contentType.prefix { $0 != UInt8(ascii: ";") }
        while let first = mediaType.first, first == 0x20 || first == 0x09 { mediaType = mediaType.dropFirst() }
        while let last = mediaType.last, last == 0x20 || last == 0x09 { mediaType = mediaType.dropLast() }
        return mediaType.equalsIgnoringASCIICase("application/json".utf8)
    }
}
