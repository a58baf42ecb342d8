import RedisClient

/// The reserve script of one policy: `reserve.lua` with its policy block (between the
/// lines `-- policy (…)` and `-- end of policy`) written with the policy's constants.
/// Each argument of a script call costs Redis about as much as a small command, so the
/// policy travels as code, once per connection (`SCRIPT LOAD`), not with every call.
/// A purpose that caps IPs has two: one that counts the IP, and one that does not (a
/// request without a client address; a cluster, where the IP's cap is a step of its own).
struct ReserveScripts {
    /// Counts the request's IP against the policy's cap (KEYS[3] is the IP's set).
    let countingIP: RedisScript
    /// Leaves the IP alone (KEYS[3] is a key of the number's slot, never touched).
    let withoutIP: RedisScript

    init(policy: CompiledPolicy, idempotencyLifetimeMilliseconds: Int64, longestIPWindowMilliseconds: Int64) {
        let capsIP = policy.rules.ipMaxSends != nil
        withoutIP = RedisScript(Self.source(
            policy: policy, countingIP: false, idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
            longestIPWindowMilliseconds: longestIPWindowMilliseconds))
        countingIP = capsIP
            ? RedisScript(Self.source(
                policy: policy, countingIP: true, idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
                longestIPWindowMilliseconds: longestIPWindowMilliseconds))
            : withoutIP
    }

    func script(countingIP counts: Bool) -> RedisScript { counts ? countingIP : withoutIP }

    /// Both scripts (one, when they are the same), to load at connect.
    var all: [RedisScript] { countingIP == withoutIP ? [withoutIP] : [countingIP, withoutIP] }

    static let template = String(decoding: EmbeddedFiles.reserve, as: UTF8.self)
    static let blockStart = "-- policy (ReserveScripts writes this block for each purpose)\n"
    static let blockEnd = "-- end of policy\n"

    /// `reserve.lua` with `policy`'s block.
    static func source(
        policy: CompiledPolicy, countingIP: Bool, idempotencyLifetimeMilliseconds: Int64, longestIPWindowMilliseconds: Int64
    ) -> String {
        guard let start = template.range(of: blockStart), let end = template.range(of: blockEnd, range: start.upperBound..<template.endIndex)
        else { preconditionFailure("reserve.lua lost its policy block's marker lines") }
        let block = Self.block(
            policy: policy, countingIP: countingIP, idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
            longestIPWindowMilliseconds: longestIPWindowMilliseconds)
        return String(template[..<start.upperBound]) + block + String(template[end.lowerBound...])
    }

    /// The block's Lua: whole numbers as Lua numbers, and as text where a command takes them.
    static func block(
        policy: CompiledPolicy, countingIP: Bool, idempotencyLifetimeMilliseconds: Int64, longestIPWindowMilliseconds: Int64
    ) -> String {
        let ladder = policy.ladderMilliseconds
        let window = policy.windowMilliseconds
        let maxSends = policy.rules.maxSends ?? 0
        let ipMax = countingIP ? policy.rules.ipMaxSends ?? 0 : 0
        let ipWindow = policy.ipWindowMilliseconds
        // The IP's set is shared by every purpose that caps IPs: kept by the longest window of any.
        let ipKeep = max(ipWindow, longestIPWindowMilliseconds)
        let longest = max(window, ladder.max() ?? 0)
        let keepSends = max(maxSends, ladder.count, 16)
        let lifetime = idempotencyLifetimeMilliseconds
        let steps = ladder.map { "'\($0)'" }.joined(separator: ", ")
        return """
            local window, windowText, maxSends, keepSends = \(window), '\(window)', \(maxSends), \(keepSends)
            local ipMax, ipWindow, ipKeep, ipKeepText = \(ipMax), \(ipWindow), \(ipKeep), '\(ipKeep + ipKeep / 8)'
            local lifetime, lifetimeText, longest, steps = \(lifetime), '\(lifetime)', \(longest), \(ladder.count)
            local watchCooldown, watchMax, watchIP = \(policy.rules.observes(.cooldown)), \(policy.rules.observes(.maxSends)), \(policy.rules.observes(.ipLimit))
            local function step(i) return (select(i, \(steps))) end

            """
    }
}
