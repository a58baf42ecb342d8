import RedisClient

/// The reserve scripts of one policy: `reserve.lua` with its policy block written with the
/// policy's constants. Each argument of a script call costs Redis about as much as a small
/// command, so the policy travels as code, once per connection (`SCRIPT LOAD`), not with
/// every call. Variants: counting the IP or not (no client address; a cluster's own IP
/// step), the cooldown in the window key or not (a gate's first seconds: `WindowCooldowns`),
/// budgets and pumping guard decided too (one Redis: `FraudGuard`) or left to own steps.
struct ReserveScripts {
    /// Indexed by `[guarded][countingIP][cooldownInWindow]` (as 0 or 1).
    private let scripts: [[[RedisScript]]]
    /// For a policy without a window, on a cluster, while no gate keeps the purpose's
    /// cooldowns in window keys: the script called with the cooldown key alone. In a slot
    /// being migrated Redis answers `TRYAGAIN` to a call naming a key it holds and one it
    /// does not (the never-written window key: every number with a running cooldown); a
    /// call naming one key is always served (`ASK` leads there). Nil for a policy with a window.
    let cooldownKeyOnly: RedisScript?

    init(policy: CompiledPolicy, idempotencyLifetimeMilliseconds: Int64, longestIPWindowMilliseconds: Int64) {
        let capsIP = policy.rules.ipMaxSends != nil
        let hasWindow = policy.windowMilliseconds > 0
        let hasGuard = policy.rules.hasBudgets || policy.rules.pumping.isOn
        var made: [String: RedisScript] = [:]
        let base = ReserveVariant(
            policy: policy, countingIP: false, cooldownInWindow: false, idempotencyLifetimeMilliseconds: idempotencyLifetimeMilliseconds,
            longestIPWindowMilliseconds: longestIPWindowMilliseconds)
        scripts = [false, true].map { guarded in
            [false, true].map { countingIP in
                [false, true].map { inWindow in
                    var variant = base
                    (variant.countingIP, variant.cooldownInWindow) = (countingIP && capsIP, inWindow && hasWindow)
                    let source = Self.source(variant, guarded: guarded && hasGuard)
                    let script = made[source] ?? RedisScript(source)
                    made[source] = script
                    return script
                }
            }
        }
        if hasWindow {
            cooldownKeyOnly = nil
        } else {
            let source = Self.source(base)
            guard source.contains(Self.numberRead) else { preconditionFailure("reserve.lua lost its read of the number's keys") }
            cooldownKeyOnly = RedisScript(source.replacing(Self.numberRead, with: Self.cooldownRead))
        }
    }

    /// reserve.lua's read of the number's two keys, and what `cooldownKeyOnly` reads instead.
    static let numberRead = "local held = call('MGET', KEYS[1], KEYS[2])\n"
    static let cooldownRead = "local held = {call('GET', KEYS[1])}\n"

    /// The variant for the call (the same script where the policy lacks what a flag turns on).
    func script(guarded: Bool, countingIP counts: Bool, cooldownInWindow inWindow: Bool) -> RedisScript {
        scripts[guarded ? 1 : 0][counts ? 1 : 0][inWindow ? 1 : 0]
    }

    /// Every distinct script, to load at connect.
    var all: [RedisScript] { Array(Set(scripts.joined().joined()).union(cooldownKeyOnly.map { [$0] } ?? [])) }

    static let blockStart = "-- policy (ReserveScripts writes this block for each purpose)\n"
    static let blockEnd = "-- end of policy\n"
    /// Where a guarded script's budgets go (`budgetPolicy`): a line `linked` puts in place of
    /// the part (not an include line, which would put itself in again).
    private static let budgetPolicyLine = "-- the policy's budgets (ReserveScripts writes them here)\n"

    /// The number's rules, in the order their parts run in each slot.
    static var numberRules: [any NumberRule.Type] { [Cooldowns.self, MaxSends.self, IPCap.self, FraudGuard.self, IssuedCodeRule.self] }

    /// A script's rules: the budgets and pumping guard only where guarded (one Redis), codes only for a purpose that issues them.
    static func rules(guarded: Bool, codes: Bool) -> [any NumberRule.Type] {
        numberRules.filter { ($0 != FraudGuard.self || guarded) && ($0 != IssuedCodeRule.self || codes) }
    }

    /// reserve.lua linked once per process, not per gate (linking reads every line, and a gate
    /// makes a script per purpose and variant): `[guarded][codes]`.
    private static let linked = [false, true].map { g in [false, true].map { linked(guarded: g, codes: $0, files: GateScripts.files) } }

    /// reserve.lua from `files` with its rules' parts put in; guarded, the budgets are left as a line to replace.
    private static func linked(guarded: Bool, codes: Bool, files: [String: [UInt8]]) -> String {
        var parts = files
        let rules = rules(guarded: guarded, codes: codes)
        // A rule left out puts in nothing, also where a reserve.lua from before the slots includes its part by name.
        for left in numberRules where !rules.contains(where: { $0 == left }) { for part in left.parts.values { parts[part] = [] } }
        if guarded { parts["budget-policy"] = Array(budgetPolicyLine.utf8) }
        let reserve = withRules(String(decoding: files["reserve"] ?? [], as: UTF8.self), rules)
        return String(decoding: GateScripts.withParts(Array(reserve.utf8), parts: parts), as: UTF8.self)
    }

    /// `text` with each line `-- rules: SLOT` replaced by an include line of each rule's part
    /// in that slot, in the rules' order (indented as the slot's line).
    static func withRules(_ text: String, _ rules: [any NumberRule.Type]) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            let indent = line.prefix { $0 == " " }
            guard line.dropFirst(indent.count).hasPrefix(slotMarker) else { return [String(line)] }
            guard let slot = RuleSlot(rawValue: String(line.dropFirst(indent.count + slotMarker.count))) else {
                preconditionFailure("reserve.lua names no slot in \(line)")
            }
            return rules.compactMap { $0.parts[slot].map { indent + "-- include: " + $0 } }
        }.joined(separator: "\n")
    }

    private static let slotMarker = "-- rules: "

    /// `prelude.lua`, then `reserve.lua` with `policy`'s block; guarded, with fraud-guard.lua
    /// (its block too) and the guard's parts, with the policy's budgets.
    static func source(_ script: ReserveVariant, guarded: Bool = false) -> String {
        let block = Self.block(script) + (guarded ? "" : "local guardRegister\n"), guardBlock = FraudGuard.block(script)
        guard let text = assemble(
            linked[guarded ? 1 : 0][script.policy.rules.codes == nil ? 0 : 1], block: { _ in block },
            guardFile: guarded ? EmbeddedFiles.fraudGuard : nil, guardBlock: { _ in guardBlock }, budgets: budgetPolicy(script.policy))
        else { preconditionFailure("reserve.lua or fraud-guard.lua lost a policy block's marker lines, or guard-check.lua its budgets") }
        return GateScripts.source([]) + "\n" + text
    }

    /// `reserve-guarded` or `reserve` from `files` with each file's blocks as written, for
    /// deploy/dev's tools (`GateScripts.text(of:)`); guarded, reserve.lua's block loses the
    /// `local guardRegister` fraud-guard.lua declares. Nil when a file is missing; a
    /// reserve.lua from before policy blocks is linked as it is.
    static func asWritten(guarded: Bool, files: [String: [UInt8]]) -> String? {
        guard files["reserve"] != nil, !guarded || files["fraud-guard"] != nil else { return nil }
        let text = linked(guarded: guarded, codes: false, files: files)
        let unguarded = /^local (checkGuard, countGuarded, )?guardRegister\n/.anchorsMatchLineEndings()  // (and before 9cc60e9)
        return assemble(
            text, block: { String(guarded ? $0.replacing(unguarded, with: "") : $0) }, guardFile: guarded ? files["fraud-guard"] : nil,
            guardBlock: { String($0) }, budgets: String(decoding: GateScripts.withParts(files["budget-policy"] ?? [], parts: files), as: UTF8.self))
            ?? (guarded ? nil : text)
    }

    /// Linked reserve.lua `text` with its block made by `block`; with `guardFile`, fraud-guard.lua
    /// after it (block by `guardBlock`) and `budgets` in their line. Nil without a marker line.
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

    /// `budget-policy.lua` for `policy`: its comment, then a test per counted limit (`BudgetCheck.rows`).
    static func budgetPolicy(_ policy: CompiledPolicy) -> String {
        let file = String(decoding: EmbeddedFiles.budgetPolicy, as: UTF8.self)
        var text = file.split(separator: "\n", omittingEmptySubsequences: false).prefix { $0.hasPrefix("-- ") }
            .map { $0 + "\n" }.joined()
        text += "local limit, shards, window, observed, reason\n"
        let rows = BudgetCheck.rows(of: policy.rules)
        for (index, (row, matchesPrefix)) in rows.enumerated() {
            let test = matchesPrefix ? "string.sub(kind, 1, \(row.kind.utf8.count)) == '\(row.kind)'" : "kind == '\(row.kind)'"
            text += (index == 0 ? "if " : "elseif ") + test + " then\n"
            text += "  limit, shards, window, observed, reason = \(row.budget.limit), \(row.budget.shards), "
                + "\(row.budget.window.wholeMilliseconds), \(row.observed), '\(row.reason.rawValue)'\n"
        }
        if !rows.isEmpty { text += "end\n" }
        return text
    }

    /// The policy block: the idempotency record's lifetime, then each rule's lines (the
    /// budgets' and pumping guard's go in fraud-guard.lua's block).
    static func block(_ script: ReserveVariant) -> String {
        let lifetime = script.idempotencyLifetimeMilliseconds
        return "local lifetime, lifetimeText = \(lifetime), '\(lifetime)'\n"
            + rules(guarded: false, codes: script.policy.rules.codes != nil).map { $0.block(script) }.joined()
    }
}
