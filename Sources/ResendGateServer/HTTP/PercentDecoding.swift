import GateRuntime

/// Query values of the HTTP API, decoded by the package's one percent-decoder.
extension PercentDecoding {
    /// The value of `name` in a query string; a repeated or malformed value is refused.
    static func queryValue(_ name: String, in query: Substring?) throws(APIError) -> String? {
        guard let query else { return nil }
        var found: String?
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == name else { continue }
            guard found == nil else { throw .invalidField("the query names \"\(name)\" twice") }
            guard parts.count == 2, let value = decode(parts[1], plusIsSpace: true) else {
                throw .invalidField("the query value of \"\(name)\" is not valid")
            }
            found = value
        }
        return found
    }
}
