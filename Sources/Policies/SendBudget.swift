import Foundation
import GateRuntime
import PhoneNumbers

/// At most `limit` allowed sends in a sliding `window`, counted over many numbers: a
/// region's budget (`country_limit`) or the total one (`global_limit`). Only allowed sends
/// count: a send takes a share before its number is decided and gives it back when the
/// number refuses it (SendBudgets.swift).
///
/// In Redis a budget is `shardCount` sorted sets (fewer when `limit` is smaller), each
/// with a hash tag of its own, holding `limit / shards` of the allowance (the remainder
/// one each to the first shards): on a Redis Cluster the budget's load is spread over
/// several slots, so it never becomes one hot key, and the shards' allowances add up to
/// `limit`, so the budget holds exactly.
public struct SendBudget: Sendable, Equatable {
    /// Allowed sends in `window`, 1 to `maximumLimit`.
    public var limit: Int
    public var window: Duration
    /// Whose sends share the budget: "" for the flags' (and the policy file's `default`)
    /// budget, which every purpose that does not set its own counts into together; a
    /// purpose's name for that purpose's own budget in the policy file.
    public var scope: String
    /// Whether the count is spread over `shardCount` keys (a count many numbers share);
    /// false keeps it in one key (a count of one number or IP: `SendLimit.Per.spreads`).
    public var spreads = true

    /// Sorted sets a budget is spread over (fewer for a budget under 8 sends).
    public static let shardCount = 8
    /// The largest budget: each counted send holds about 100 bytes of Redis memory for
    /// its window, so 10 million sends are about 1 GB.
    public static let maximumLimit = 10_000_000

    public init(limit: Int, window: Duration, scope: String = "") {
        self.limit = limit
        self.window = window
        self.scope = scope
    }

    /// How many sorted sets hold the budget: `shardCount`, or `limit` when smaller, so
    /// every shard has room for one send at least; one when it does not spread.
    public var shards: Int { spreads ? max(1, min(Self.shardCount, limit)) : 1 }

    /// The sends shard `index` may hold: an even share, the remainder to the first shards.
    public func allowance(ofShard index: Int) -> Int {
        limit / shards + (index < limit % shards ? 1 : 0)
    }

    /// Refuses a budget that cannot work, naming `field`.
    public func lint(field: String) throws(ConfigurationError) {
        guard (1...Self.maximumLimit).contains(limit) else {
            throw ConfigurationError(field: field, message: "the number of sends must be 1 to \(Self.maximumLimit), got \(limit)")
        }
        guard window >= .milliseconds(1) else { throw ConfigurationError(field: field, message: "the window must be at least 1 ms") }
    }

    /// Reads `N/D` (`100000/24h`: 100 000 sends a day).
    public static func parse(_ text: String, field: String, scope: String = "") throws(ConfigurationError) -> SendBudget {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let limit = Int(parts[0].trimmingCharacters(in: .whitespaces)) else {
            throw ConfigurationError(field: field, message: "\"\(text)\" is not a budget: write sends/window, such as 100000/24h")
        }
        let budget = SendBudget(limit: limit, window: try DurationParser.parse(String(parts[1]), field: field), scope: scope)
        try budget.lint(field: field)
        return budget
    }

    /// Reads `CN=50000/24h,+44=2000/24h` into budgets by destination: a region (upper
    /// case; libphonenumber's, so `GG` and `JE` numbers are not `GB`'s) or a calling code
    /// (`+44`: every region under it); "" is none.
    public static func parseRegions(_ text: String, field: String, scope: String = "") throws(ConfigurationError) -> [String: SendBudget] {
        var budgets: [String: SendBudget] = [:]
        for entry in text.split(separator: ",") {
            let pair = entry.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else {
                throw ConfigurationError(field: field, message: "\"\(entry)\" is not REGION=sends/window, such as CN=50000/24h")
            }
            let region = pair[0].trimmingCharacters(in: .whitespaces).uppercased()
            try lintDestination(region, field: field)
            guard budgets[region] == nil else { throw ConfigurationError(field: field, message: "\(region) has two budgets") }
            budgets[region] = try parse(String(pair[1]), field: field, scope: scope)
        }
        return budgets
    }

    /// A policy file's `country_max_sends`: `{"CN": "50000/24h", "+44": "2000/24h"}`, or null for none.
    static func regions(fromJSON value: Any, field: String, scope: String) throws(ConfigurationError) -> [String: SendBudget] {
        if value is NSNull { return [:] }
        guard let object = value as? [String: Any] else {
            throw ConfigurationError(field: field, message: "must be an object of regions, such as {\"CN\": \"50000/24h\"}, or null")
        }
        var budgets: [String: SendBudget] = [:]
        for (name, raw) in object.sorted(by: { $0.key < $1.key }) {
            guard let text = raw as? String else {
                throw ConfigurationError(field: field + "." + name, message: "must be sends/window, such as \"50000/24h\"")
            }
            let region = name.uppercased()
            try lintDestination(region, field: field + "." + name)
            budgets[region] = try parse(text, field: field + "." + name, scope: scope)
        }
        return budgets
    }

    /// A policy file's `max_sends_total`: `"100000/24h"`, or null for none.
    static func total(fromJSON value: Any, field: String, scope: String) throws(ConfigurationError) -> SendBudget? {
        if value is NSNull { return nil }
        guard let text = value as? String else {
            throw ConfigurationError(field: field, message: "must be sends/window, such as \"100000/24h\", or null")
        }
        return try parse(text, field: field, scope: scope)
    }

    /// The scope of a budget set at `path` of a policy file: a purpose's name under
    /// `purposes.NAME.`, else "" (the default's, shared).
    static func scope(ofPolicyPath path: String) -> String {
        guard path.hasPrefix("purposes.") else { return "" }
        return String(path.dropFirst("purposes.".count).dropLast())
    }

    /// A region libphonenumber knows (`CN`), or a calling code (`+44`, 1 to 3 digits).
    static func lintDestination(_ destination: String, field: String) throws(ConfigurationError) {
        if destination.hasPrefix("+") {
            let digits = destination.dropFirst()
            guard (1...3).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" else {
                throw ConfigurationError(field: field, message: "\"\(destination)\" is not a calling code (+ and 1 to 3 digits, such as +44)")
            }
            return
        }
        guard PhoneNumber.isKnownRegion(destination) else {
            throw ConfigurationError(field: field, message: "\"\(destination)\" is not a known region (two letters, such as CN or GB) or calling code (such as +44)")
        }
    }
}
