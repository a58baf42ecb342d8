import RedisClient

/// The Lua scripts that decide atomically inside Redis, one `.lua` file each in
/// `Gate/Scripts/` (compiled in at build time by Plugins/EmbedFiles, see
/// `Scripts/EmbeddedFiles.txt`); each file starts with its KEYS, ARGV and reply. Times and
/// windows are Redis's own (`TIME`, `PTTL`, or Redis's clock as the connection reckons it
/// from its last `TIME`: `RedisArguments.appendRedisNow`): the gate's clock never decides.
///
/// Keys of one number and purpose share a hash tag (one cluster slot); per-IP and
/// idempotency keys have slots of their own, so on Redis Cluster they take steps of
/// their own (see GateWorker+Cluster.swift). The default policy needs no script
/// (GateWorker+Cooldown.swift), and countdown tokens no key (CountdownTokenCipher).
package enum GateScripts {
    // The general decision, `reserve.lua`, is one script per policy: `ReserveScripts`.
    /// A number's wait now, never writing (`peek.lua`).
    static let peek = script(EmbeddedFiles.peek)
    /// A refund of the running cooldown's send, within the refund limit (`release.lua`).
    static let release = script(EmbeddedFiles.release)
    /// A checked code's outcome: clears or counts wrong codes, locks at the limit (`verify.lua`).
    static let verify = script(EmbeddedFiles.verify)

    // MARK: Redis Cluster: the steps that live in slots of their own

    /// A share of a client IP's cap, taken in the IP's slot (`ip-take.lua`).
    static let ipTake = script(EmbeddedFiles.ipTake)
    /// An idempotency record written in its slot; the first answer stays (`idempotency-put.lua`).
    static let idempotencyPut = script(EmbeddedFiles.idempotencyPut)

    /// A share of each send budget, from the first of its shards with room (`budget-take.lua`):
    /// its own step before the number's; on one Redis every budget in one call, on a cluster
    /// one call a shard (GateWorker+Budgets.swift).
    static let budgetTake = script(EmbeddedFiles.budgetTake)

    /// The SMS-pumping guard of a destination prefix, in the prefix's slot (`pumping.lua`).
    static let pumping = script(EmbeddedFiles.pumping)

    /// A countdown token's lookup of the cooldown it names (`countdown-of-cooldown.lua`).
    static let countdownOfCooldown = script(EmbeddedFiles.countdownOfCooldown)

    /// Which purposes' cooldowns gates keep in window keys (`window-cooldowns.lua`: `WindowCooldowns`).
    static let windowCooldowns = script(EmbeddedFiles.windowCooldowns)

    static let all = [peek, release, verify, ipTake, idempotencyPut, countdownOfCooldown, budgetTake, pumping, windowCooldowns]

    /// `prelude.lua`, the parts the file's first line names (`-- parts: budget-shards`:
    /// files of functions), then the file.
    static func script(_ file: [UInt8]) -> RedisScript {
        RedisScript(source(withParts(file)))
    }

    /// The parts `file`'s first line names, then `file`.
    static func withParts(_ file: [UInt8]) -> [[UInt8]] {
        let head = String(decoding: file.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let names = head.hasPrefix("-- parts: ") ? head.dropFirst("-- parts: ".count).split(separator: " ") : []
        return names.map { name in
            guard let part = parts[String(name)] else { preconditionFailure("no Lua part named \(name)") }
            return part
        } + [file]
    }

    /// The files of functions a script may name on its first line.
    static let parts = ["budget-shards": EmbeddedFiles.budgetShards, "prefix-counts": EmbeddedFiles.prefixCounts]

    /// The text of a script made of `prelude.lua` (unless `prelude` is false) and `files`,
    /// as Redis runs it.
    package static func source(_ files: [[UInt8]], prelude: Bool = true) -> String {
        ((prelude ? [EmbeddedFiles.prelude] : []) + files).map { String(decoding: $0, as: UTF8.self) + "\n" }.joined()
    }
}
