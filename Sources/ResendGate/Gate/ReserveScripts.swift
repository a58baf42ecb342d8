import RedisClient

/// The reserve scripts of one policy: `reserve.lua` with its policy block (between the
/// lines `-- policy (…)` and `-- end of policy`) written with the policy's constants.
/// Each argument of a script call costs Redis about as much as a small command, so the
/// policy travels as code, once per connection (`SCRIPT LOAD`), not with every call.
/// A purpose that caps IPs has scripts that count the IP, and scripts that do not (a
/// request without a client address; a cluster, where the IP's cap is a step of its own).
/// A policy with a window has scripts that keep the running cooldown in the window key,
/// and scripts that keep it in the cooldown key, for a gate's first seconds
/// (`WindowCooldowns`). A policy with budgets or the pumping guard has scripts that decide
/// them too, for one Redis (`FraudGuard`), and scripts that leave them to steps of their
/// own, for a cluster.
struct ReserveScripts {
    /// Indexed by `[guarded][countingIP][cooldownInWindow]` (as 0 or 1).
    private let scripts: [[[RedisScript]]]
    /// For a policy without a window, on a cluster: the script called with the number's
    /// cooldown key alone (it reads no window), while no gate keeps the purpose's cooldowns
    /// in window keys (`WindowCooldowns`). Redis refuses a call naming two keys of a slot
    /// being migrated with `TRYAGAIN` while it holds one of them and not the other (a
    /// window key such a policy never writes: every number with a running cooldown) and
    /// on the importing node while either is missing; a call naming one key is always
    /// served, where that key is (`ASK` leads there). Nil for a policy with a window.
    let cooldownKeyOnly: RedisScript?

    init(policy: CompiledPolicy, idempotencyLifetimeMilliseconds: Int64, longestIPWindowMilliseconds: Int64) {
        let capsIP = policy.rules.ipMaxSends != nil
        let hasWindow = policy.windowMilliseconds > 0
        let hasGuard = policy.rules.hasBudgets || policy.rules.pumping.isOn
        var made: [String: RedisScript] = [:]
        scripts = [false, true].map { guarded in
            [false, true].map { countingIP in
                [false, true].map { inWindow in
                    let source = Self.source(
                        policy: policy, guarded: guarded && hasGuard, countingIP: countingIP && capsIP,
                        cooldownInWindow: inWindow && hasWindow,
                        idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
                        longestIPWindowMilliseconds: longestIPWindowMilliseconds)
                    if let script = made[source] { return script }
                    let script = RedisScript(source)
                    made[source] = script
                    return script
                }
            }
        }
        if hasWindow {
            cooldownKeyOnly = nil
        } else {
            let source = Self.source(
                policy: policy, countingIP: false, cooldownInWindow: false,
                idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
                longestIPWindowMilliseconds: longestIPWindowMilliseconds)
            guard source.contains(Self.numberRead) else { preconditionFailure("reserve.lua lost its read of the number's keys") }
            cooldownKeyOnly = RedisScript(source.replacing(Self.numberRead, with: Self.cooldownRead))
        }
    }

    /// reserve.lua's read of the number's two keys, and what a call naming the cooldown key
    /// alone reads instead (the same table, without a window).
    static let numberRead = "local held = call('MGET', KEYS[1], KEYS[2])\n"
    static let cooldownRead = "local held = {call('GET', KEYS[1])}\n"

    /// The script that decides budgets and the pumping guard too or not, counts the IP or
    /// not, and keeps the cooldown in the window key or not (each the same script when the
    /// policy has no budget nor guard, no IP cap, or no window).
    func script(guarded: Bool, countingIP counts: Bool, cooldownInWindow inWindow: Bool) -> RedisScript {
        scripts[guarded ? 1 : 0][counts ? 1 : 0][inWindow ? 1 : 0]
    }

    /// Every distinct script, to load at connect.
    var all: [RedisScript] { Array(Set(scripts.joined().joined()).union(cooldownKeyOnly.map { [$0] } ?? [])) }

    static let blockStart = "-- policy (ReserveScripts writes this block for each purpose)\n"
    static let blockEnd = "-- end of policy\n"
    /// Where a guarded script's budgets go (`budgetPolicy`): a line `guardedParts` holds in
    /// place of the part (not an include line, which would put itself in again).
    private static let budgetPolicyLine = "-- the policy's budgets (ReserveScripts writes them here)\n"

    /// reserve.lua with its parts put in once per process, not per gate (a gate makes a script
    /// for each purpose and variant, and putting parts in reads every line): guarded and not,
    /// each with the issued code's parts (`IssuedCodes`) and without.
    private static let linked = [false, true].map { g in [false, true].map { linked(guarded: g, codes: $0, files: GateScripts.files) } }

    /// reserve.lua from `files` with its parts put in: with the guard's (the policy's budgets
    /// left as a line to replace) or without, with the issued code's or without.
    private static func linked(guarded: Bool, codes: Bool, files: [String: [UInt8]]) -> String {
        var parts = files
        for left in (guarded ? [] : ["guard-check", "guard-count"]) + (codes ? [] : ["code-issue", "code-write"]) { parts[left] = [] }
        if guarded { parts["budget-policy"] = Array(budgetPolicyLine.utf8) }
        return String(decoding: GateScripts.withParts(files["reserve"] ?? [], parts: parts), as: UTF8.self)
    }

    /// `reserve.lua` with `policy`'s block, after `prelude.lua`; guarded, the block is
    /// followed by fraud-guard.lua with its own, and the guard's parts are put in (with the
    /// policy's budgets); else they are left out.
    static func source(
        policy: CompiledPolicy, guarded: Bool = false, countingIP: Bool, cooldownInWindow: Bool,
        idempotencyLifetimeMilliseconds: Int64, longestIPWindowMilliseconds: Int64
    ) -> String {
        let block = Self.block(
            policy: policy, countingIP: countingIP, cooldownInWindow: cooldownInWindow,
            idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
            longestIPWindowMilliseconds: longestIPWindowMilliseconds) + (guarded ? "" : "local guardRegister\n")
        guard let text = assemble(
            linked[guarded ? 1 : 0][policy.rules.codes == nil ? 0 : 1], block: { _ in block },
            guardFile: guarded ? EmbeddedFiles.fraudGuard : nil, guardBlock: { _ in guardBlock(policy) }, budgets: budgetPolicy(policy))
        else { preconditionFailure("reserve.lua or fraud-guard.lua lost a policy block's marker lines, or guard-check.lua its budgets") }
        return GateScripts.source([]) + "\n" + text
    }

    /// `reserve-guarded` or `reserve` from `files` (no issued code), each file's blocks as
    /// written (`GateScripts.text(of:)`, for deploy/dev's tools): the policies deploy/dev/bench
    /// measures. Guarded, reserve.lua's block loses its `local guardRegister` (fraud-guard.lua's).
    /// Nil when a file is missing; a reserve.lua from before policy blocks is linked as it is.
    static func asWritten(guarded: Bool, files: [String: [UInt8]]) -> String? {
        guard files["reserve"] != nil, !guarded || files["fraud-guard"] != nil else { return nil }
        let text = linked(guarded: guarded, codes: false, files: files)
        let unguarded = /^local (checkGuard, countGuarded, )?guardRegister\n/.anchorsMatchLineEndings()  // (and before 9cc60e9)
        return assemble(
            text, block: { String(guarded ? $0.replacing(unguarded, with: "") : $0) }, guardFile: guarded ? files["fraud-guard"] : nil,
            guardBlock: { String($0) }, budgets: String(decoding: GateScripts.withParts(files["budget-policy"] ?? [], parts: files), as: UTF8.self))
            ?? (guarded ? nil : text)
    }

    /// reserve.lua `text` (its parts put in) with its policy block made by `block` from the one
    /// written; with `guardFile` (fraud-guard.lua), that file after it, its block made by
    /// `guardBlock`, and `budgets` where guard-check.lua's part was left as a line. Nil when a
    /// marker line is missing.
    private static func assemble(
        _ text: String, block: (Substring) -> String, guardFile: [UInt8]?, guardBlock: (Substring) -> String, budgets: String
    ) -> String? {
        guard let start = text.range(of: blockStart), let end = text.range(of: blockEnd, range: start.upperBound..<text.endIndex)
        else { return nil }
        var guardPart = ""
        var rest = text[end.upperBound...]
        if let guardFile = guardFile.map({ String(decoding: $0, as: UTF8.self) }) {
            guard let from = guardFile.range(of: guardBlockStart), let to = guardFile.range(of: guardBlockEnd, range: from.upperBound..<guardFile.endIndex)
            else { return nil }
            guardPart = guardFile[..<from.upperBound] + guardBlock(guardFile[from.upperBound..<to.lowerBound]) + guardFile[to.lowerBound...]
            rest = Substring(rest.replacing(budgetPolicyLine, with: budgets, maxReplacements: 1))  // none before 9cc60e9
        }
        return text[..<start.upperBound] + block(text[start.upperBound..<end.lowerBound]) + blockEnd + guardPart + rest
    }

    static let guardBlockStart = "-- guard policy (ReserveScripts writes this block for each purpose with either)\n"
    static let guardBlockEnd = "-- end of guard policy\n"

    /// The constants of `fraud-guard.lua`: where KEYS' budgets begin, and the pumping guard's.
    static func guardBlock(_ policy: CompiledPolicy) -> String {
        let pumping = policy.rules.pumping
        return """
            local firstBudgetKey = \(pumping.isOn ? 7 : 5)
            local pumpOn, pumpObserved = \(pumping.isOn), \(policy.rules.observes(.suspectedPumping))
            local pumpWindow, pumpBucket = \(pumping.window.wholeMilliseconds), \(pumping.bucketMilliseconds)
            local pumpMinSends, pumpPPM = \(pumping.minSends ?? 1), \(pumping.minConversionPartsPerMillion)

            """
    }

    /// `budget-policy.lua` for `policy`: its comment, then a test per counted limit, by
    /// its kind (`BudgetCheck.rows`).
    static func budgetPolicy(_ policy: CompiledPolicy) -> String {
        let file = String(decoding: EmbeddedFiles.budgetPolicy, as: UTF8.self)
        var text = file.split(separator: "\n", omittingEmptySubsequences: false).prefix { $0.hasPrefix("-- ") }
            .map { $0 + "\n" }.joined()
        text += "local limit, shards, window, observed, reason\n"
        let rows = BudgetCheck.rows(of: policy.rules)
        for (index, row) in rows.enumerated() {
            let test = row.matchesPrefix ? "string.sub(kind, 1, \(row.kind.utf8.count)) == '\(row.kind)'" : "kind == '\(row.kind)'"
            text += (index == 0 ? "if " : "elseif ") + test + " then\n"
            text += "  limit, shards, window, observed, reason = \(row.budget.limit), \(row.budget.shards), "
                + "\(row.budget.window.wholeMilliseconds), \(row.observed), '\(row.reason.rawValue)'\n"
        }
        if !rows.isEmpty { text += "end\n" }
        return text
    }

    /// The block's Lua: whole numbers as Lua numbers, and as text where a command takes them.
    static func block(
        policy: CompiledPolicy, countingIP: Bool, cooldownInWindow: Bool, idempotencyLifetimeMilliseconds: Int64,
        longestIPWindowMilliseconds: Int64
    ) -> String {
        let ladder = policy.ladderMilliseconds
        let window = policy.windowMilliseconds
        let maxSends = policy.rules.maxSends ?? 0
        let ipMax = countingIP ? policy.rules.ipMaxSends ?? 0 : 0
        let ipWindow = policy.ipWindowMilliseconds
        // The IP's set is shared by every purpose that caps IPs: kept by the longest window of any.
        let ipKeep = max(ipWindow, longestIPWindowMilliseconds)
        let longest = policy.longestHoldMilliseconds
        let keepSends = max(maxSends, ladder.count, 16)
        let lifetime = idempotencyLifetimeMilliseconds
        let steps = ladder.map { "'\($0)'" }.joined(separator: ", ")
        // A number's first send and the step after it, the most frequent, without a call of `step`.
        let first = ladder.first ?? 0
        let second = ladder.dropFirst().first ?? first
        let codes = policy.rules.codes
        return """
            local window, windowLifeText, maxSends, keepSends = \(window), '\(longest)', \(maxSends), \(keepSends)
            local cooldownInWindow = \(cooldownInWindow)
            local ipMax, ipWindow, ipKeep, ipKeepText = \(ipMax), \(ipWindow), \(ipKeep), '\(ipKeep + ipKeep / 8)'
            local lifetime, lifetimeText, longest, steps = \(lifetime), '\(lifetime)', \(longest), \(ladder.count)
            local watchCooldown, watchMax, watchIP = \(policy.rules.observes(.cooldown)), \(policy.rules.observes(.maxSends)), \(policy.rules.observes(.ipLimit))
            local function step(i) return (select(i, \(steps))) end
            local firstHold, firstHoldMs, secondHold = '\(first)', \(first), '\(second)'
            local codeKeys = \(codes == nil ? 0 : 1)

            """ + (codes.map { codes in
                // The number's code key and the new code come last (`ReserveArguments`).
                let life = codes.lifetime.wholeMilliseconds
                return """
                    local codeKey, codeArg, codeLife, codeLifeText = KEYS[#KEYS], ARGV[#ARGV], \(life), '\(life)'
                    local codeSame = \(codes.onResend == .same)

                    """
            } ?? "")
    }
}
