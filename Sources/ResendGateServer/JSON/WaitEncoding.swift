import ResendGate

/// A wait as every answer spells it: `retry_after` (whole seconds rounded up, so a client
/// is never early), `retry_after_ms`, when it ends by Redis's clock; and a refusal's
/// `Retry-After` and IETF `RateLimit` / `RateLimit-Policy` headers.
enum WaitEncoding {
    static func write(_ milliseconds: Int64, to json: inout JSONWriter) {
        json.field("retry_after", Decision.wholeSeconds(milliseconds))
        json.field("retry_after_ms", milliseconds)
    }

    /// Writes the wait, the moment it ends as `end` (`serverTime` plus the wait; null when
    /// nothing `runs`), and `server_time`.
    static func write(_ milliseconds: Int64, end: StaticString, serverTime: Int64, runs: Bool = true, to json: inout JSONWriter) {
        write(milliseconds, to: &json)
        json.key(end)
        if runs { json.timestamp(millisecondsSince1970: serverTime + milliseconds) } else { json.null() }
        json.key("server_time")
        json.timestamp(millisecondsSince1970: serverTime)
    }

    /// A refusal by the limit `name`: none left, one more in `milliseconds`.
    static func headers(_ milliseconds: Int64, limit name: String, quota: Int) -> [(String, String)] {
        let seconds = String(Decision.wholeSeconds(milliseconds))
        return [
            ("Retry-After", seconds),
            ("RateLimit-Policy", "\"\(name)\";q=\(quota)"),
            ("RateLimit", "\"\(name)\";r=0;t=\(seconds)"),
        ]
    }
}
