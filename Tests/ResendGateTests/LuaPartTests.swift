import Policies
@testable import ResendGate
import Testing

/// A Lua part (a file a script puts in with `-- include: NAME`) takes values from the script
/// and gives values back only through the names its header lines declare (docs/internals.md):
/// `-- reads: a, b` the names it reads that are not its own, `-- sets: x, y` those it assigns
/// and the locals it declares for what follows (`(none)`: none; a long list goes on on a
/// second line of the same kind). Names Lua and prelude.lua give every script need none.
@Suite("Lua parts read and set what they declare")
struct LuaPartTests {
    /// Every file a script includes, or a rule puts in reserve.lua's slots (`NumberRule.parts`).
    static let parts = Set(
        GateScripts.files.values.flatMap { includes(String(decoding: $0, as: UTF8.self)) } + ReserveScripts.numberRules.flatMap { $0.parts.values }).sorted()

    /// Lua's and Redis's globals, and the prelude's locals: every script starts with it.
    static let environment = Set([
        "string", "math", "table", "tonumber", "tostring", "type", "redis", "KEYS", "ARGV", "unpack", "select", "ipairs",
        "pairs", "next", "error", "pcall", "cjson", "bit",
    ] + preludeNames)

    static var preludeNames: [String] {
        let lines = String(decoding: GateScripts.files["prelude"] ?? [], as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("local ") }
        return lines.flatMap { (line: Substring) -> [String] in
            let declared = line.dropFirst("local ".count).replacing("function ", with: "").prefix { $0 != "=" && $0 != "(" }
            return declared.split(separator: ",").map { String($0.filter { $0 != " " }) }
        }
    }

    @Test func everyIncludedFileIsAPartAndThePreludeGivesItsNames() {
        #expect(Self.parts.count >= 20)
        #expect(Self.parts.contains("window-read") && Self.parts.contains("budget-policy") && Self.parts.contains("trust-mark"))
        #expect(Self.environment.isSuperset(of: ["call", "clock", "cooldownNonce", "redis", "KEYS"]))
    }

    /// Each part, its own parts put in: every name it reads that is not its own is declared
    /// in `reads`, every name it assigns that is not its own in `sets`, and nothing more.
    @Test(arguments: parts) func aPartReadsAndSetsExactlyWhatItsHeaderDeclares(name: String) {
        #expect(Self.issues(ofPart: name) == [])
    }

    /// In every script as the gate makes it, each part's `reads` are declared before it is put
    /// in (by the script, or in an earlier part's `sets`), and so is every name the script
    /// itself or a part uses and does not declare: no name reaches a part but through a header.
    @Test func everyScriptDeclaresWhatItsPartsReadBeforeThem() {
        var rules = Policy(
            ladder: [.seconds(60), .seconds(120)], window: .seconds(86_400), maxSends: 5, ipMaxSends: 100, ipWindow: .seconds(3600),
            codes: IssuedCodes())
        rules.maxSendsTotal = SendBudget(limit: 100, window: .seconds(86_400))
        rules.pumping.minSends = 100
        var issues: [String] = []
        for (name, file) in GateScripts.files where !Self.parts.contains(name) && !["prelude", "fraud-guard", "reserve"].contains(name) {
            Self.walk(String(decoding: file, as: UTF8.self), path: name, issues: &issues)
        }
        for guarded in [false, true] {
            let policy = CompiledPolicy(guarded ? rules : Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 3))
            let block = ReserveScripts.block(ReserveVariant(
                policy: policy, countingIP: true, cooldownInWindow: true, idempotencyLifetimeMilliseconds: 1000,
                longestIPWindowMilliseconds: 1000)) + ReserveScripts.blockEnd
                + (guarded ? String(decoding: GateScripts.files["fraud-guard"] ?? [], as: UTF8.self) : "local guardRegister\n")
            let reserve = String(decoding: EmbeddedFiles.reserve, as: UTF8.self)
            guard let start = reserve.range(of: ReserveScripts.blockStart), let end = reserve.range(of: ReserveScripts.blockEnd) else {
                Issue.record("reserve.lua lost its policy block's marker lines")
                return
            }
            let linked = ReserveScripts.withRules(
                String(reserve[..<start.upperBound]) + block + reserve[end.upperBound...], ReserveScripts.rules(guarded: guarded, codes: guarded))
            Self.walk(linked, path: "reserve", issues: &issues)
        }
        #expect(issues == [])
    }

    /// The checks find a part that reads a name it does not declare, one that sets a name it
    /// does not declare, and a part put in before what it reads is declared.
    @Test func theChecksFindAnUndeclaredReadOrSetAndAPartPutInTooEarly() {
        var files = GateScripts.files
        files["ip-hold"] = (files["ip-hold"] ?? []) + Array("if ipFull then wait = wait + 1 end\n".utf8)
        #expect(Self.issues(ofPart: "ip-hold", files: files) == ["ip-hold.lua reads [\"ipFull\"] without declaring it"])
        files["ip-hold"] = (GateScripts.files["ip-hold"] ?? []) + Array("reason = ''\n".utf8)
        #expect(Self.issues(ofPart: "ip-hold", files: files) == ["ip-hold.lua sets [\"reason\"] without declaring it"])
        var issues: [String] = []
        Self.walk("local now = 0\n-- include: ladder-hold\nlocal steps, step = 1, nil\n", path: "early", issues: &issues)
        #expect(issues.first == "early includes ladder-hold, which reads [\"firstHold\", \"firstHoldMs\", \"sends\", \"step\", \"steps\"] before anything declares them")
    }

    // MARK: The checks

    /// What part `name`'s header says wrong (none: `[]`), its parts put in from `files`.
    static func issues(ofPart name: String, files: [String: [UInt8]] = GateScripts.files) -> [String] {
        let file = files[name] ?? []
        guard let declared = declaration(String(decoding: file, as: UTF8.self)) else { return ["\(name).lua lacks a `-- reads:` or `-- sets:` line"] }
        let used = LuaNames(String(decoding: GateScripts.withParts(file, parts: files), as: UTF8.self))
        let reads = used.reads.subtracting(environment)
        return [
            (reads.subtracting(declared.reads), "reads", "without declaring it"),
            (declared.reads.subtracting(reads), "declares", "in `reads` but does not read it before setting it"),
            (used.assigned.subtracting(declared.sets), "sets", "without declaring it"),
            (declared.sets.subtracting(used.assigned).subtracting(used.locals), "declares", "in `sets` but neither sets nor declares it"),
        ].filter { !$0.0.isEmpty }.map { "\(name).lua \($0.1) \($0.0.sorted()) \($0.2)" }
    }

    /// A file's `-- reads:` and `-- sets:` names, or nil without either line.
    static func declaration(_ file: String) -> (reads: Set<String>, sets: Set<String>)? {
        func names(_ key: String) -> Set<String>? {
            let lines = file.split(separator: "\n").filter { $0.hasPrefix("-- \(key): ") }
            guard !lines.isEmpty else { return nil }
            return Set(lines.flatMap { $0.dropFirst(key.count + 5).split(separator: ",").map { String($0.filter { $0 != " " }) } })
                .subtracting(["(none)"])
        }
        guard let reads = names("reads"), let sets = names("sets") else { return nil }
        return (reads, sets)
    }

    /// Reads `text` in order, a piece between include lines at a time: each piece may use what
    /// is declared before it (`available`), each part its declared `reads`; then what the piece
    /// declares, or the part's `sets`, is available to what follows. A part's own pieces are
    /// read the same way, inside it.
    static func walk(
        _ text: String, available: Set<String> = [], path: String, files: [String: [UInt8]] = GateScripts.files, issues: inout [String]
    ) {
        var available = available, piece = ""
        func close() {
            let names = LuaNames(piece)
            let unknown = names.reads.union(names.assigned).subtracting(available).subtracting(environment)
            if !unknown.isEmpty { issues.append("\(path) uses \(unknown.sorted()) that nothing before declares") }
            available.formUnion(names.locals)
            piece = ""
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let name = includes(String(line)).first else {
                piece += line + "\n"
                continue
            }
            close()
            let part = String(decoding: files[name] ?? [], as: UTF8.self)
            guard !part.isEmpty else { continue }  // left out of this script
            let declared = declaration(part) ?? ([], [])
            let early = declared.reads.subtracting(available)
            if !early.isEmpty { issues.append("\(path) includes \(name), which reads \(early.sorted()) before anything declares them") }
            walk(part, available: available, path: "\(path) > \(name)", files: files, issues: &issues)
            available.formUnion(declared.sets)
        }
        close()
    }

    static func includes(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let trimmed = line.drop { $0 == " " }
            return trimmed.hasPrefix("-- include: ") ? String(trimmed.dropFirst("-- include: ".count)) : nil
        }
    }
}
