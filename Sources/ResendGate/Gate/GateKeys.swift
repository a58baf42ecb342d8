import RedisClient

/// How every Redis key and channel of the gate is spelled: the one place that knows.
/// The spellings are a storage format (a gate that spelled a key differently would not
/// see the cooldowns running under the old one), so a test pins each of them; what each
/// key holds is listed in docs/anti-abuse.md.
///
/// A number's keys (`rg:{login:+8613800138000}:cooldown`) share the hash tag
/// `{purpose:number}` (`number` is the E.164 text or its HMAC, see `NumberKeyHasher`), so
/// every call about one number runs in one cluster slot. The per-IP counter, an
/// idempotency record, a budget's shard and a prefix's counts have hash tags of their own.
public struct GateKeys: Sendable, Hashable {
    /// The first part of every key (`--key-prefix`, `rg` by default).
    public let prefix: String

    public init(prefix: String) {
        self.prefix = prefix
    }

    /// The keys of one number for one purpose.
    public enum NumberKey: String, Sendable, CaseIterable {
        case cooldown
        /// The sends in the policy's window. (Versions before 0.9 kept them in a sorted set
        /// named `sends`; the new name keeps a mixed deployment from reading one as the other.)
        case window
        case refunds
        /// Wrong codes checked in the policy's window, toward the lockout.
        case failedChecks = "failed"
        /// Set by a `verified` for `trustedFor` while the pumping guard is on: the guard skips the number.
        case trusted
        /// The code the gate issued the number (`CodeRecord`), for a purpose that issues codes.
        case code
        /// Never written: fills the reserve script's per-IP slot when no cap applies, so
        /// the script's arity never changes and all its keys stay in the number's slot.
        case noIP = "no-ip"
        /// Never written: fills the idempotency record's slot without an `Idempotency-Key`.
        case noIdempotency = "no-idem"
    }

    /// The hash tag of a number's keys (`login:+8613800138000`): the slot their calls run in.
    public func slotKey(purpose: Purpose, number: String) -> String {
        purpose.name + ":" + number
    }

    /// `prefix:{purpose:number}:<key>`.
    public func key(_ key: NumberKey, purpose: Purpose, number: String) -> String {
        text { append(key, purpose: purpose, number: number, to: &$0) }
    }

    /// The running cooldown of a number (`CooldownValue`), or its lock; expires when it ends.
    public func cooldown(purpose: Purpose, number: String) -> String { key(.cooldown, purpose: purpose, number: number) }
    /// The sends of a number in the policy's window, then, with
    /// `GateConfiguration.cooldownsInWindows`, its running cooldown (after a `;`).
    public func window(purpose: Purpose, number: String) -> String { key(.window, purpose: purpose, number: number) }
    /// The refunds of a number in the policy's window.
    public func refunds(purpose: Purpose, number: String) -> String { key(.refunds, purpose: purpose, number: number) }

    /// The sends from one client address (`ClientAddress.text`: an IPv4 address or an IPv6 /64).
    public func ipSends(address: String) -> String { text { appendIPSends(address: address, to: &$0) } }

    /// The record of an `Idempotency-Key` sent by `caller` ("" without API keys), named by the
    /// SHA-1 of `caller + " " + key` (of the key alone for ""): any key's text fits, and, as a
    /// key has no spaces, no two callers share a record.
    public func idempotencyRecord(idempotencyKey: String, caller: String = "") -> String {
        let scoped = caller.isEmpty ? idempotencyKey : caller + " " + idempotencyKey
        return text { spell(":idem:{", SHA1.hexDigest(Array(scoped.utf8)), suffix: "}", to: &$0) }
    }

    /// Shard `shard` of a send budget (`SendBudget`), a hash tag of its own: `scope` "" is the
    /// shared budget, else a purpose's; `kind` a region (`CN`), a calling code (`+44`) or `total`.
    public func budgetShard(scope: String, kind: String, shard: Int) -> String {
        text { appendBudgetShard(scope: scope, kind: kind, shard: shard, to: &$0) }
    }

    /// Appends a budget shard's key as one argument (see `budgetShard(scope:kind:shard:)`).
    func appendBudgetShard(scope: String, kind: String, shard: Int, to args: inout RedisArguments) {
        spell(":budget:{", scope.isEmpty ? "*" : scope, kind, Self.shardNames[shard], suffix: "}", to: &args)
    }

    private static let shardNames = (0..<SendBudget.shardCount).map { String($0) }

    /// The hash tag of a prefix's counts for `purpose` (`login:+447911`): their slot.
    public func prefixSlotKey(purpose: Purpose, prefix: PrefixKey) -> String {
        purpose.name + ":" + prefix.text
    }

    /// `prefix:pump:{purpose:+447911}`: a prefix's sends and verifications per bucket of
    /// the window (`pumping.lua`); its hash tag is `prefixSlotKey`.
    public func pumping(purpose: Purpose, prefix: PrefixKey) -> String {
        text { appendPumping(purpose: purpose, prefix: prefix, to: &$0) }
    }

    /// Appends `pumping(purpose:prefix:)` as one argument (built for every guarded send).
    func appendPumping(purpose: Purpose, prefix: PrefixKey, to args: inout RedisArguments) {
        spell(":pump:{", purpose.name, prefix.text, suffix: "}", to: &args)
    }

    /// `prefix:pump:blocked`: the prefixes found blocked, by when (`purpose:+447911` members,
    /// trimmed to the longest pumping window and `PumpingRegistry.capacity`). Only listings read it.
    public var blockedPrefixes: String { prefix + ":pump:blocked" }

    /// The countdown token secret a deployment keeps in Redis when none is given.
    public var tokenSecret: String { prefix + ":token-secret" }
    /// The purposes whose cooldowns gates keep in window keys (`WindowCooldowns`).
    public var windowCooldowns: String { prefix + ":window-cooldowns" }

    /// The pub/sub channel every refund publishes the released cooldown's value on.
    public var releasedChannel: String { prefix + ":released" }

    /// Appends `key` of the number as one argument, making no String (the hot path).
    func append(_ key: NumberKey, purpose: Purpose, number: String, to args: inout RedisArguments) {
        spell(":{", purpose.name, number, suffix: "}:", name: key.rawValue, to: &args)
    }

    /// Appends the sends key of a client address as one argument (see `ipSends(address:)`).
    func appendIPSends(address: String, to args: inout RedisArguments) {
        spell(":ip:{", address, suffix: "}:sends", to: &args)
    }

    /// The one spelling of every key with a hash tag, written as one argument part by part:
    /// the prefix, `space` (`:{`, `:ip:{`, ...), the tag's parts joined by `:`, `suffix` (`}`,
    /// ...) and the key's name.
    private func spell(
        _ space: String, _ first: String, _ second: String? = nil, _ third: String? = nil, suffix: String, name: String = "",
        to args: inout RedisArguments
    ) {
        args.appendPart(prefix)
        args.appendPart(space)
        args.appendPart(first)
        if let second { args.appendPart(":"); args.appendPart(second) }
        if let third { args.appendPart(":"); args.appendPart(third) }
        args.appendPart(suffix)
        if !name.isEmpty { args.appendPart(name) }
        args.endArgument()
    }

    /// A key's text: the one argument `write` spells.
    private func text(_ write: (inout RedisArguments) -> Void) -> String {
        var args = RedisArguments()
        write(&args)
        return String(decoding: args.bytes, as: UTF8.self)
    }
}
