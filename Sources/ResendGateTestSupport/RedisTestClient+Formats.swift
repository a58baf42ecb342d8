import ResendGate

extension RedisTestClient {
    /// What the scripts make of a cooldown value (`prelude.lua`'s layout), asked of this
    /// Redis: the value of `nonce` and `deadline`, and the nonce and deadline (nil: none)
    /// they read from `value`.
    public func scriptsCooldownValue(nonce: String, deadline: Int64, reading value: String) throws
        -> (made: String, nonce: String, deadline: Int64?)
    {
        let script = GateScripts.source([GateScripts.withParts(EmbeddedFiles.cooldownValue)])
        let reply = try command("EVAL", script, "0", nonce, String(deadline), value)
        guard case .array(let items) = reply, items.count == 3, let made = items[0].string, let read = items[1].string,
              let deadline = items[2].integer
        else { throw TestSupportError.protocolViolation.with("cooldown-value.lua answered \(reply)") }
        return (made, read, deadline < 0 ? nil : Int64(deadline))
    }

    /// What the scripts make of a window key's value (window-split.lua), asked of this Redis:
    /// its sends, and its own cooldown's value (nil: none).
    public func scriptsWindowValue(_ value: String) throws -> (sends: String, own: String?) {
        let script = GateScripts.source([GateScripts.withParts(EmbeddedFiles.windowValue)])
        let reply = try command("EVAL", script, "0", value)
        guard case .array(let items) = reply, items.count == 3, let sends = items[0].string, let hasOwn = items[1].integer,
              let own = items[2].string
        else { throw TestSupportError.protocolViolation.with("window-value.lua answered \(reply)") }
        return (sends, hasOwn == 1 ? own : nil)
    }
}
