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

    /// What the scripts make of a budget shard's name (budget-key.lua, budget-room.lua), asked
    /// of this Redis: its kind, and the shard of that budget (`limit`, `shards`, `window` ms)
    /// with room at `now` (nil: none).
    public func scriptsBudgetKey(_ name: String, limit: Int, shards: Int, window: Int64, now: Int64) throws -> (kind: String, room: String?) {
        let script = GateScripts.source([GateScripts.withParts(EmbeddedFiles.budgetKeyLayout)])
        let reply = try command("EVAL", script, "0", name, String(limit), String(shards), String(window), String(now))
        guard case .array(let items) = reply, items.count == 2, let kind = items[0].string, let room = items[1].string
        else { throw TestSupportError.protocolViolation.with("budget-key-layout.lua answered \(reply)") }
        return (kind, room.isEmpty ? nil : room)
    }
}

/// An issued code's record as the scripts read it (code-split.lua).
public struct ScriptsCodeRecord: Equatable, Sendable {
    public let identity: String, expiry: Int64, state: String, wrongChecks: Int?, digest: String, keyID: String, tail: String
}

extension RedisTestClient {
    /// What the scripts make of an issued code's record, asked of this Redis: the fields
    /// code-split.lua reads from `value`, and the record code-make.lua makes of `making`.
    public func scriptsCodeRecord(
        reading value: String, making: (identity: String, expiry: Int64, state: String, tail: String)
    ) throws -> (read: ScriptsCodeRecord, made: String) {
        let script = GateScripts.source([GateScripts.withParts(EmbeddedFiles.codeRecord)])
        let reply = try command("EVAL", script, "0", value, making.identity, String(making.expiry), making.state, making.tail)
        guard case .array(let items) = reply, items.count == 8, let identity = items[0].string, let expiry = items[1].integer,
              let state = items[2].string, let wrong = items[3].integer, let digest = items[4].string,
              let keyID = items[5].string, let tail = items[6].string, let made = items[7].string
        else { throw TestSupportError.protocolViolation.with("code-record.lua answered \(reply)") }
        let read = ScriptsCodeRecord(
            identity: identity, expiry: Int64(expiry), state: state, wrongChecks: wrong < 0 ? nil : wrong, digest: digest,
            keyID: keyID, tail: tail)
        return (read, made)
    }
}
