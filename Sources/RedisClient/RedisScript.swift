/// A Lua script that the connection loads at connect (`SCRIPT LOAD`) and calls by
/// its SHA-1 (`EVALSHA`), reloading it once if Redis answers `NOSCRIPT`.
public struct RedisScript: Sendable, Hashable {
    public let source: String
    /// The SHA-1 of `source` in lower-case hex, as Redis names the script.
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        sha1 = SHA1.hexDigest(Array(source.utf8))
    }
}
