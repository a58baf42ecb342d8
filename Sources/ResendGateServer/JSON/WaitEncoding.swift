import ResendGate

/// A wait as every answer spells it, in one place: `retry_after` (whole seconds, rounded
/// up, so a client that waits that long is never early: `Decision.wholeSeconds`),
/// `retry_after_ms`, and the moment it ends (`resend_at`, `free_at`) from Redis's clock;
/// and the `Retry-After` and IETF `RateLimit` / `RateLimit-Policy` headers of a refusal.
enum WaitEncoding {
    /// Writes `retry_after` and `retry_after_ms`; with an `end` key, also when the wait ends
    /// (`serverTime` plus the wait, null when nothing `runs`) and `server_time`.
    static func write(_ milliseconds: Int64, end: StaticString? = nil, serverTime: Int64 = 0, runs: Bool = true,
                      to json: inout JSONWriter) {
        json.field("retry_after", Decision.wholeSeconds(milliseconds))
        json.field("retry_after_ms", milliseconds)
        guard let end else { return }
        json.key(end)
        if runs { json.timestamp(millisecondsSince1970: serverTime + milliseconds) } else { json.null() }
        json.key("server_time")
        json.timestamp(millisecondsSince1970: serverTime)
    }

    /// The headers of a refusal by the limit `name`, whose quota is `quota` and which frees
    /// one in `milliseconds`: it has none left now.
    static func headers(_ milliseconds: Int64, limit name: String, quota: Int) -> [(String, String)] {
        let seconds = String(Decision.wholeSeconds(milliseconds))
        return [
            ("Retry-After", seconds),
            ("RateLimit-Policy", "\"\(name)\";q=\(quota)"),
            ("RateLimit", "\"\(name)\";r=0;t=\(seconds)"),
        ]
    }
}
