import ResendGate

extension RedisTestClient {
    /// What the scripts make of a cooldown value (`prelude.lua`'s layout), asked of this
    /// Redis: the value of `nonce` and `deadline`, and the nonce and deadline (nil: none)
    /// they read from `value`.
    public func scriptsCooldownValue(nonce: String, deadline: Int64, reading value: String) throws
        -> (made: String, nonce: String, deadline: Int64?)
    {
        let script = GateScripts.source([EmbeddedFiles.cooldownValue])
        let reply = try command("EVAL", script, "0", nonce, String(deadline), value)
        guard case .array(let items) = reply, items.count == 3, let made = items[0].string, let read = items[1].string,
              let deadline = items[2].integer
        else { throw TestSupportError.protocolViolation.with("cooldown-value.lua answered \(reply)") }
        return (made, read, deadline < 0 ? nil : Int64(deadline))
    }
}
