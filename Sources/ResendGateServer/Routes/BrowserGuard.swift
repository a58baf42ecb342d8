/// What a web page in a user's browser can make it send to a gate, refused before any
/// route runs.
///
/// - **DNS rebinding.** A page on `attacker.example` can point its name at 127.0.0.1 and
///   reach a gate on the user's loopback as its own origin, past every cross-origin rule,
///   but its `Host` still names it: a keyless gate on loopback answers only a `Host` of
///   `localhost`, `127.0.0.1` or `[::1]` (any port), else 421 `misdirected_request`. No
///   `Host` (HTTP/1.0 tools) is no browser's, and passes.
/// - **Cross-origin writes.** A page can POST anywhere without CORS (`no-cors`, a form),
///   and the browser names it in `Origin`. A request other than GET and HEAD whose `Origin`
///   is not in `--allow-origins` (by default the gate's own) is 403 `forbidden`, with keys
///   or without: a proxy that adds the key for browsers makes a gate as reachable as a
///   keyless one. No `Origin` (curl, servers) passes.
extension Worker {
    func browserRefusal(_ exchange: Exchange) -> APIError? {
        if checksHost, exchange.request.withHeader("Host", Self.isLoopbackHost) == false {
            return .misdirectedRequest("this gate has no API keys and answers only requests addressed to localhost, 127.0.0.1 or [::1]")
        }
        if exchange.method != .get && exchange.method != .head,
           exchange.request.withHeader("Origin", { origin in allowedOrigins.contains { origin.equalsIgnoringASCIICase($0) } }) == false {
            return .forbidden("requests from a web page of this origin are not accepted (it is not among the gate's allowed origins)")
        }
        return nil
    }

    /// `localhost`, `127.0.0.1` or `[::1]`, in any case, with or without `:port`.
    static func isLoopbackHost(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        loopbackNames.contains { name in
            guard host.prefix(name.count).equalsIgnoringASCIICase(name) else { return false }
            let port = host.dropFirst(name.count)
            return port.isEmpty || (port.first == UInt8(ascii: ":") && (2...6).contains(port.count)
                && port.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        }
    }

    private static let loopbackNames: [[UInt8]] = [Array("localhost".utf8), Array("127.0.0.1".utf8), Array("[::1]".utf8)]
}
