import ResendGate

extension RedisTestClient {
    /// Moves the gate's state in this Redis `milliseconds` into the past, which to the gate's
    /// scripts is the same as that much time passing: every key's time to live shrinks by it
    /// (a key with less left is deleted, as its expiry would), and every time the gate stamped
    /// by Redis's clock moves back by it: sorted-set scores (the IP's sends, refunds), the
    /// sends a number's window key holds (`…:window`, see `windowSends`), a cooldown's
    /// deadline (in its key's value, or the window's: `heldCooldown`), and every hash
    /// field named `<letter>:<ms>` (the pumping guard names its buckets by their start on
    /// Redis's clock; fields that land on one name are added up). Atomic, in one script.
    ///
    /// Tests use it instead of sleeping through a cooldown or a window: the policy's durations
    /// can then be minutes long, so a machine that stalls for seconds cannot end one early.
    /// Only for a test's own Redis: it walks every key that matches `pattern`.
    public func advanceTime(byMilliseconds milliseconds: Int, keys pattern: String = "*") throws {
        precondition(milliseconds > 0, "time only moves forward")
        let reply = try command("EVAL", Self.timeTravelScript, "0", pattern, String(milliseconds))
        guard reply.integer != nil else {
            throw TestSupportError.protocolViolation.with("moving time forward at \(endpoint) failed: \(reply)")
        }
    }

    /// Lets `key`'s time to live run out now, moving the rest of the state with it (see
    /// `advanceTime(byMilliseconds:keys:)`). Returns the milliseconds it moved; throws when the
    /// key has no time to live.
    @discardableResult
    public func runOut(_ key: String) throws -> Int {
        guard let left = try command("PTTL", key).integer, left > 0 else {
            throw TestSupportError.protocolViolation.with("\(key) has no time to live to run out")
        }
        try advanceTime(byMilliseconds: left)
        return left
    }

    private static let timeTravelScript = GateScripts.source([GateScripts.withParts(EmbeddedFiles.timeTravel)])
}
