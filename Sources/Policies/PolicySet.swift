import Foundation
import GateRuntime

/// The configured purposes and the policy of each. The purposes are an allow-list:
/// every purpose has limits of its own per number, so a gate that took any purpose
/// name would let a caller multiply a number's caps by inventing purposes. A purpose
/// is configured when it is `default`, named in `plainPurposes`, or a key of `purposes`;
/// the gate refuses any other with `invalid_purpose`.
public struct PolicySet: Sendable, Equatable {
    /// The policy of `default` and of every plain purpose; the base of the overrides.
    public var fallback: Policy
    /// Purposes with policies of their own.
    public var purposes: [String: Policy]
    /// Further purposes that follow `fallback` (`--purposes`).
    public var plainPurposes: Set<String>

    public init(fallback: Policy = .default, purposes: [String: Policy] = [:], plainPurposes: Set<String> = []) {
        self.fallback = fallback
        self.purposes = purposes
        self.plainPurposes = plainPurposes
    }

    /// Every configured purpose: `default`, the plain ones and those with a policy.
    public var configuredPurposes: Set<String> {
        plainPurposes.union(purposes.keys).union([Purpose.default.name])
    }

    /// Whether a gate with these policies decides `purpose` (else `invalid_purpose`).
    public func isConfigured(_ purpose: Purpose) -> Bool {
        purpose == .default || purposes[purpose.name] != nil || plainPurposes.contains(purpose.name)
    }

    /// The policy of a purpose: its own, or `fallback` (also for a purpose not configured,
    /// which the gate refuses before any policy applies).
    public func policy(for purpose: Purpose) -> Policy {
        purposes[purpose.name] ?? fallback
    }

    /// Checks every policy and purpose name, naming the field that is wrong.
    public func lint() throws(ConfigurationError) {
        try fallback.lint()
        for name in plainPurposes.sorted() {
            if Purpose(validating: name) == nil {
                throw ConfigurationError(field: "purposes", message: "\"\(name)\": a purpose must match [a-z0-9_-]{1,32}")
            }
        }
        for (name, policy) in purposes.sorted(by: { $0.key < $1.key }) {
            if Purpose(validating: name) == nil {
                throw ConfigurationError(field: "policy", message: "purposes.\(name): a purpose must match [a-z0-9_-]{1,32}")
            }
            try policy.lint(where: "purposes.\(name).")
        }
    }

    /// Reads a policy file: `{"default": {...}, "purposes": {"login": {...}}}`, each
    /// object with any of `cooldown`, `window`, `max_sends`, `ip_max_sends`,
    /// `ip_window`, `allow_regions`, `allow_number_types`, `max_refunds`, `max_failed_checks`, `lockout_scope`,
    /// `lockout`, `country_max_sends`, `max_sends_total`, `limits`, `observe`, `pumping_min_sends`,
    /// `pumping_window`, `pumping_min_conversion` (`0.1` or `"10%"`), `prefix_digits`,
    /// `trusted_for`. A purpose's object
    /// starts from the default; the default starts from `base` (the flags).
    /// `plainPurposes` are configured too (`--purposes`), with the file's default policy.
    public static func parse(json data: Data, base: Policy, plainPurposes: Set<String> = []) throws(ConfigurationError) -> PolicySet {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(field: "policy", message: "the file is not valid JSON: \(error.localizedDescription)")
        }
        guard let root = object as? [String: Any] else {
            throw ConfigurationError(field: "policy", message: "the file must hold a JSON object")
        }
        for key in root.keys where key != "default" && key != "purposes" {
            throw ConfigurationError(field: "policy", message: "unknown field \"\(key)\" (use \"default\" and \"purposes\")")
        }
        let fallback = try overlay(root["default"], on: base, path: "default.")
        var purposes: [String: Policy] = [:]
        if let raw = root["purposes"] {
            guard let map = raw as? [String: Any] else {
                throw ConfigurationError(field: "policy", message: "\"purposes\" must be an object of purpose names")
            }
            for (name, value) in map {
                purposes[name] = try overlay(value, on: fallback, path: "purposes.\(name).")
            }
        }
        let set = PolicySet(fallback: fallback, purposes: purposes, plainPurposes: plainPurposes)
        // A mistake in the file's default section is named as the default's, not as a flag.
        if root["default"] != nil { try fallback.lint(where: "default.") }
        try set.lint()
        return set
    }

    /// JSON `true`/`false`. Not `value is Bool`: on Linux every NSNumber holding 0 or 1
    /// casts to Bool, which refused `"max_sends": 1`.
    private static func isJSONBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return value is Bool }
        return String(cString: number.objCType) == "c"
    }

    private static func overlay(_ raw: Any?, on base: Policy, path: String) throws(ConfigurationError) -> Policy {
        guard let raw else { return base }
        guard let object = raw as? [String: Any] else {
            throw ConfigurationError(field: path.dropLast().description, message: "must be an object")
        }
        var policy = base
        // The code's settings, applied once the object says whether codes are on (keys come in any order).
        var codes = base.codes ?? IssuedCodes()
        let codeFields = object.keys.filter { $0.hasPrefix("code_") }.sorted()
        for (key, value) in object {
            let field = path + key
            func text() throws(ConfigurationError) -> String {
                if let string = value as? String { return string }
                if let number = value as? NSNumber, !isJSONBoolean(value) { return number.stringValue }
                throw ConfigurationError(field: field, message: "must be a duration such as \"60s\"")
            }
            func count() throws(ConfigurationError) -> Int? {
                if value is NSNull { return nil }
                guard let number = value as? NSNumber, !isJSONBoolean(value), number.doubleValue == Double(number.intValue) else {
                    throw ConfigurationError(field: field, message: "must be a whole number or null")
                }
                return number.intValue
            }
            /// `count()` where null means nothing: `why` says what the number does.
            func whole(_ why: String) throws(ConfigurationError) -> Int {
                guard let whole = try count() else {
                    throw ConfigurationError(field: field, message: "must be a whole number" + why)
                }
                return whole
            }
            func list() throws(ConfigurationError) -> String {
                guard let items = value as? [String] else {
                    throw ConfigurationError(field: field, message: "must be a list of strings")
                }
                return items.joined(separator: ",")
            }
            // A rule that is not a counter: its text as its option takes it, or null for none.
            if let kind = PolicyRules.kind(field: key) {
                guard value is NSNull || value is String else {
                    throw ConfigurationError(field: field, message: "must be text as --\(kind.name) takes it (\(kind.placeholder)), or null")
                }
                policy.ruleTexts[kind.name] = value as? String
                continue
            }
            switch key {
            case "cooldown": policy.ladder = try Policy.parseLadder(try text(), field: field)
            case "window": policy.window = try DurationParser.parse(try text(), field: field)
            case "max_sends": policy.maxSends = try count()
            case "ip_max_sends": policy.ipMaxSends = try count()
            case "max_refunds": policy.maxRefunds = try whole(" (0 disables refunds)")
            case "ip_window": policy.ipWindow = try DurationParser.parse(try text(), field: field)
            case "max_failed_checks": policy.maxFailedChecks = try whole(" (0: no lockout)")
            case "lockout": policy.lockout = try DurationParser.parse(try text(), field: field)
            case "lockout_scope": policy.lockoutScope = try LockoutScope.parse(try text(), field: field)
            case "pumping_min_sends": policy.pumping.minSends = try count()
            case "pumping_window": policy.pumping.window = try DurationParser.parse(try text(), field: field)
            case "pumping_min_conversion": policy.pumping.minConversion = try PumpingGuard.parseConversion(try text(), field: field)
            case "prefix_digits": policy.pumping.prefixDigits = try whole("")
            case "trusted_for": policy.pumping.trustedFor = try DurationParser.parse(try text(), field: field)
            case "allow_regions":
                policy.allowedRegions = value is NSNull ? nil : Policy.parseRegions(try list())
            case "allow_number_types": policy.allowedNumberTypes = try Policy.parseNumberTypes(try list(), field: field)
            case "country_max_sends":
                policy.countryMaxSends = try SendBudget.regions(fromJSON: value, field: field, scope: SendBudget.scope(ofPolicyPath: path))
            case "max_sends_total":
                policy.maxSendsTotal = try SendBudget.total(fromJSON: value, field: field, scope: SendBudget.scope(ofPolicyPath: path))
            case "limits": policy.limits = try SendLimit.list(fromJSON: value, field: field, scope: SendBudget.scope(ofPolicyPath: path))
            case "observe": policy.observe = try Policy.parseObserve(try list(), field: field)
            case "issue_codes":
                guard isJSONBoolean(value), let on = value as? Bool else {
                    throw ConfigurationError(field: field, message: "must be true or false")
                }
                policy.codes = on ? policy.codes ?? IssuedCodes() : nil
            case "code_length": codes.length = try whole("")
            case "code_lifetime": codes.lifetime = try DurationParser.parse(try text(), field: field)
            case "code_on_resend": codes.onResend = try IssuedCodes.parseResend(try text(), field: field)
            default:
                let rules = PolicyRules.kinds.map { ", " + $0.field }.joined()
                throw ConfigurationError(field: field, message: "unknown field (known: cooldown, window, max_sends, max_refunds, ip_max_sends, ip_window, allow_regions, allow_number_types, max_failed_checks, lockout, lockout_scope, country_max_sends, max_sends_total, limits, observe, pumping_min_sends, pumping_window, pumping_min_conversion, prefix_digits, trusted_for, issue_codes, code_length, code_lifetime, code_on_resend\(rules))")
            }
        }
        if let field = codeFields.first {
            guard policy.codes != nil else {
                throw ConfigurationError(field: path + field, message: "needs \"issue_codes\": true (here or in the policy it starts from)")
            }
            policy.codes = codes
        }
        return policy
    }
}
