import RedisClient

/// The Lua scripts that decide atomically inside Redis, one file each in `Gate/Scripts/`
/// (embedded at build time by Plugins/EmbedFiles); each file starts with its KEYS, ARGV and
/// reply. Times are Redis's own (`TIME`, `PTTL`, `RedisArguments.appendRedisNow`): the
/// gate's clock never decides. On a cluster, keys outside the number's slot take steps of
/// their own (`Placement`, `SlotSteps`).
package enum GateScripts {
    // The general decision, `reserve.lua`, is one script per policy: `ReserveScripts`.
    /// A number's wait now, never writing (`peek.lua`).
    static let peek = script(EmbeddedFiles.peek)
    /// A refund of the running cooldown's send, within the refund limit (`release.lua`).
    static let release = script(EmbeddedFiles.release)
    /// A checked code's outcome: clears or counts wrong codes, locks at the limit (`verify.lua`).
    static let verify = script(EmbeddedFiles.verify)
    /// A check of a typed code against the number's issued one (`check.lua`: `IssuedCodeRule`).
    static let check = script(EmbeddedFiles.check)
    /// A code countdown token's lookup of the code it names (`countdown-of-code.lua`).
    static let countdownOfCode = script(EmbeddedFiles.countdownOfCode)

    // MARK: Redis Cluster: the steps that live in slots of their own

    /// A share of a client IP's cap, taken in the IP's slot (`ip-take.lua`).
    static let ipTake = script(EmbeddedFiles.ipTake)
    /// An idempotency record written in its slot; the first answer stays (`idempotency-put.lua`).
    static let idempotencyPut = script(EmbeddedFiles.idempotencyPut)

    /// A share of each send budget, from the first of its shards with room (`budget-take.lua`,
    /// SendBudgets.swift).
    static let budgetTake = script(EmbeddedFiles.budgetTake)

    /// The SMS-pumping guard of a destination prefix, in the prefix's slot (`pumping.lua`).
    static let pumping = script(EmbeddedFiles.pumping)

    /// A countdown token's lookup of the cooldown it names (`countdown-of-cooldown.lua`).
    static let countdownOfCooldown = script(EmbeddedFiles.countdownOfCooldown)

    /// Which purposes' cooldowns gates keep in window keys (`window-cooldowns.lua`: `WindowCooldowns`).
    static let windowCooldowns = script(EmbeddedFiles.windowCooldowns)

    static let all = [
        peek, release, verify, check, countdownOfCode, ipTake, idempotencyPut, countdownOfCooldown, budgetTake, pumping,
        windowCooldowns,
    ]

    /// `prelude.lua`, then the file with its parts put in (`withParts`).
    static func script(_ file: [UInt8]) -> RedisScript {
        RedisScript(source([withParts(file)]))
    }

    /// `file` with each line `-- include: NAME` replaced by NAME.lua from `parts`, itself with
    /// its parts put in: text, not a Lua function, since Redis makes every function of a
    /// script anew on each call (a closure costs about as much as a small command).
    package static func withParts(_ file: [UInt8], parts: [String: [UInt8]] = files) -> [UInt8] {
        var text: [UInt8] = []
        var lines = file.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // a part left out (empty) puts in nothing
        for line in lines {
            let trimmed = line.drop { $0 == UInt8(ascii: " ") }
            if trimmed.starts(with: includeMarker) {
                let name = String(decoding: trimmed.dropFirst(includeMarker.count), as: UTF8.self)
                guard let part = parts[name] else { preconditionFailure("no Lua part named \(name)") }
                text += withParts(part, parts: parts)
            } else {
                text += line
                text.append(UInt8(ascii: "\n"))
            }
        }
        return text
    }

    private static let includeMarker = Array("-- include: ".utf8)

    /// Every file of `Scripts/` by name (`peek` for peek.lua): scripts and parts.
    package static let files = Dictionary(uniqueKeysWithValues: EmbeddedFiles.byPath.map { path, bytes in
        (String(path.split(separator: "/").last!.dropLast(".lua".count)), bytes)
    })

    /// Script `name` (`peek`, `reserve`, `reserve-guarded`, …) from `files` as Redis runs it,
    /// for `resendgate lua-script` (docs/development.md); nil when `files` has no such script.
    package static func text(of name: String, files: [String: [UInt8]] = files) -> String? {
        let prelude = files["prelude"].map { String(decoding: $0, as: UTF8.self) + "\n" } ?? ""
        if name == "reserve" || name == "reserve-guarded" {
            return ReserveScripts.asWritten(guarded: name == "reserve-guarded", files: files).map { prelude + $0 }
        }
        return files[name].map { prelude + String(decoding: withParts($0, parts: files), as: UTF8.self) }
    }

    /// The text of a script made of `prelude.lua` and `files`, as Redis runs it.
    package static func source(_ files: [[UInt8]]) -> String {
        ([EmbeddedFiles.prelude] + files).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
    }
}
