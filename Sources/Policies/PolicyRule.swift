import GateRuntime
import PhoneNumbers

/// A rule that is not a counter: decided in the gate's memory, before Redis is asked, from
/// the send's facts and the clock. One type per rule, with its own option (`--NAME`) and
/// policy-file field (`NAME` with `_`), listed once in `PolicyRules.kinds`: adding one is
/// its file, its line there, and its reason's row of the table of reasons (`DecisionReason`).
public protocol PolicyRule: Sendable {
    /// The option (`send-hours`); the policy file's field is it with `_` (`send_hours`).
    static var name: String { get }
    /// What the option's value looks like, and its help (docs/configuration.md's table).
    static var placeholder: String { get }
    static var help: String { get }
    /// Reads the rule as its option spells it, refusing what cannot work, naming `field`.
    init(parsing text: String, field: String) throws(ConfigurationError)
    /// The refusal of `send`, or nil when this rule lets it go on.
    func refusal(of send: RuleInput) -> RuleRefusal?
}

extension PolicyRule {
    /// The policy file's field (`send_hours`).
    static var field: String { name.replacingOccurrences(of: "-", with: "_") }
}

/// What a rule that is not a counter decides from: the number's facts, the purpose, the clock.
public struct RuleInput: Sendable {
    public let number: PhoneNumber
    public let purpose: String
    /// The gate's clock, in ms since 1970 (UTC).
    public let nowMilliseconds: Int64

    public init(number: PhoneNumber, purpose: String, nowMilliseconds: Int64) {
        self.number = number
        self.purpose = purpose
        self.nowMilliseconds = nowMilliseconds
    }
}

/// A rule's refusal: its reason, and the ms until it would let the send go.
public struct RuleRefusal: Sendable, Equatable {
    public let reason: DecisionReason
    public let waitMilliseconds: Int64

    public init(reason: DecisionReason, waitMilliseconds: Int64) {
        self.reason = reason
        self.waitMilliseconds = max(1, waitMilliseconds)
    }
}

/// The rules that are not counters.
public enum PolicyRules {
    /// Every kind, in the order they decide.
    public static let kinds: [any PolicyRule.Type] = [SendHours.self]

    /// The kind a policy file's field names (`send_hours`), if any.
    static func kind(field: String) -> (any PolicyRule.Type)? {
        kinds.first { $0.field == field }
    }

    /// The rules `policy` sets (`Policy.ruleTexts`), in the order they decide; throws
    /// naming the option when one cannot work.
    public static func rules(of policy: Policy, where prefix: String = "") throws(ConfigurationError) -> [any PolicyRule] {
        var rules: [any PolicyRule] = []
        for kind in kinds {
            guard let text = policy.ruleTexts[kind.name] else { continue }
            rules.append(try kind.init(parsing: text, field: prefix + kind.name))
        }
        return rules
    }
}
