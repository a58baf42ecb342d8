import Foundation
import GateRuntime

/// A counted limit written as data (as an Envoy rate-limit descriptor): at most
/// `budget.limit` allowed sends in `budget.window`, counted per `per` (each number, each
/// client IP, each purpose, ...), answering `reason` when full, or only observed. Added by
/// configuration alone (`--limit`, a policy file's `limits`): the gate counts it with the
/// same machinery as the region and total budgets (`SendBudget`), which are its instances
/// with their own spellings (`country_max_sends`, `max_sends_total`).
public struct SendLimit: Sendable, Equatable {
    /// What a limit counts per: each value has a count of its own.
    public enum Per: String, Sendable, CaseIterable {
        /// Each number (as its keys name it: the number, or its HMAC under `--key-secret`).
        case number
        /// Each client IP (IPv6: its /64); a request without a client address is not counted.
        case ip
        /// Each pair of a client IP and a number (an HMAC-free digest of the two).
        case ipNumber = "ip+number"
        /// Each destination region (`CN`, libphonenumber's region of the number).
        case region
        /// Each calling code (`+44`).
        case callingCode = "calling-code"
        /// Each purpose.
        case purpose
        /// Every send together.
        case all

        /// The reason a full limit answers unless the limit names another.
        public var defaultReason: DecisionReason {
            switch self {
            case .number: .maxSends
            case .ip, .ipNumber: .ipLimit
            case .region, .callingCode: .countryLimit
            case .purpose, .all: .globalLimit
            }
        }

        /// Whether a count is shared by many numbers (and so spread over `SendBudget.shardCount`
        /// keys, never one hot key on a Redis Cluster); a count of one number or IP is one key.
        public var spreads: Bool { [.region, .callingCode, .purpose, .all].contains(self) }
    }

    /// The reasons a counted limit may answer.
    public static let reasons: [DecisionReason] = [.maxSends, .ipLimit, .countryLimit, .globalLimit]

    /// Names the limit in keys, errors and docs: 1 to 32 of `a-z`, `0-9`, `-`.
    public var name: String
    public var per: Per
    /// The count, its window, and whose sends share it (`SendBudget.scope`).
    public var budget: SendBudget
    public var reason: DecisionReason
    /// Counted and reported (`Decision.observed`), never refusing.
    public var observe: Bool

    public init(name: String, per: Per, budget: SendBudget, reason: DecisionReason? = nil, observe: Bool = false) {
        self.name = name
        self.per = per
        var budget = budget
        budget.spreads = per.spreads
        self.budget = budget
        self.reason = reason ?? per.defaultReason
        self.observe = observe
    }

    /// The limit as `--limit` spells it.
    public var text: String {
        var text = "\(name),per=\(per.rawValue),sends=\(budget.limit)/\(DurationParser.format(budget.window))"
        if reason != per.defaultReason { text += ",reason=\(reason.rawValue)" }
        return observe ? text + ",observe" : text
    }

    /// Refuses a limit that cannot work, naming `field`.
    public func lint(field: String) throws(ConfigurationError) {
        guard (1...32).contains(name.count), name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else { throw ConfigurationError(field: field, message: "\"\(name)\" is not a limit's name (1 to 32 of a-z, 0-9 and -)") }
        guard Self.reasons.contains(reason) else {
            throw ConfigurationError(field: field, message: "a limit answers one of \(Self.reasons.map(\.rawValue).joined(separator: ", ")), not \(reason.rawValue)")
        }
        try budget.lint(field: field)
    }

    /// Reads `NAME,per=PER,sends=N/D[,reason=R][,observe]` (`login-day,per=purpose,sends=10000/24h`).
    public static func parse(_ text: String, field: String = "limit", scope: String = "") throws(ConfigurationError) -> SendLimit {
        var parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { throw ConfigurationError(field: field, message: "is empty: write NAME,per=PER,sends=N/D") }
        let name = parts.removeFirst()
        var fields: [String: String] = [:]
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            fields[pair[0]] = pair.count == 2 ? pair[1] : "true"
        }
        return try make(name: name, fields: fields, field: field + " " + name, scope: scope)
    }

    /// Reads `;`-separated limits (a repeated `--limit` is joined so).
    public static func parseList(_ text: String, field: String = "limit", scope: String = "") throws(ConfigurationError) -> [SendLimit] {
        let limits = try text.split(separator: ";").filter { !$0.allSatisfy(\.isWhitespace) }
            .map { entry throws(ConfigurationError) in try parse(String(entry), field: field, scope: scope) }
        try lintNames(limits, field: field)
        return limits
    }

    /// A policy file's `limits`: `{"login-day": {"per": "purpose", "sends": "10000/24h"}}`, or null for none.
    static func list(fromJSON value: Any, field: String, scope: String) throws(ConfigurationError) -> [SendLimit] {
        if value is NSNull { return [] }
        guard let object = value as? [String: Any] else {
            throw ConfigurationError(field: field, message: "must be an object of limits by name, such as {\"login-day\": {\"per\": \"purpose\", \"sends\": \"10000/24h\"}}, or null")
        }
        var limits: [SendLimit] = []
        for (name, raw) in object.sorted(by: { $0.key < $1.key }) {
            guard let entry = raw as? [String: Any] else { throw ConfigurationError(field: field + "." + name, message: "must be an object") }
            var fields: [String: String] = [:]
            for (key, value) in entry {
                if let text = value as? String { fields[key] = text } else if let flag = value as? Bool { fields[key] = flag ? "true" : "false" } else {
                    throw ConfigurationError(field: field + "." + name + "." + key, message: "must be text (or true/false for observe)")
                }
            }
            limits.append(try make(name: name, fields: fields, field: field + "." + name, scope: scope))
        }
        return limits
    }

    /// Two limits of one policy may not share a name (it names their keys), nor take `total`, the total budget's.
    static func lintNames(_ limits: [SendLimit], field: String) throws(ConfigurationError) {
        var seen: Set<String> = ["total"]
        for limit in limits where !seen.insert(limit.name).inserted {
            throw ConfigurationError(field: field, message: "two limits are named \(limit.name) (or one is named total, the total budget's name)")
        }
    }

    private static func make(name: String, fields: [String: String], field: String, scope: String) throws(ConfigurationError) -> SendLimit {
        let known: Set<String> = ["per", "sends", "reason", "observe"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw ConfigurationError(field: field, message: "unknown part \"\(unknown)\" (known: per, sends, reason, observe)")
        }
        guard let perText = fields["per"], let per = Per(rawValue: perText) else {
            throw ConfigurationError(field: field, message: "needs per= one of \(Per.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let sends = fields["sends"] else { throw ConfigurationError(field: field, message: "needs sends=N/D, such as sends=10000/24h") }
        var reason: DecisionReason?
        if let text = fields["reason"] {
            guard let named = DecisionReason(rawValue: text) else { throw ConfigurationError(field: field, message: "\"\(text)\" is not a reason") }
            reason = named
        }
        guard ["true", "false", nil].contains(fields["observe"]) else { throw ConfigurationError(field: field, message: "observe is true or false") }
        let limit = SendLimit(
            name: name, per: per, budget: try SendBudget.parse(sends, field: field, scope: scope), reason: reason,
            observe: fields["observe"] == "true")
        try limit.lint(field: field)
        return limit
    }
}
