import GateRuntime

extension Policy {
    /// Whether `rule` runs in observe mode for this policy: computed and reported
    /// (`Decision.observed`) but never refusing a send. The one place every rule asks.
    public func observes(_ rule: DecisionReason) -> Bool {
        observe.contains(rule)
    }

    /// Whether a send under this policy must fit in a budget (a region's or the total).
    public var hasBudgets: Bool {
        maxSendsTotal != nil || !countryMaxSends.isEmpty || !limits.isEmpty
    }

    /// Reads `country_limit,global_limit` into rules; any name that is not a reason code is
    /// refused, naming the known ones.
    public static func parseObserve(_ text: String, field: String = "observe") throws(ConfigurationError) -> Set<DecisionReason> {
        try parseNames(text, field: field, naming: "a rule")
    }

    /// Refuses a rule that cannot be observed (its row of the table of reasons says so),
    /// naming the field: `locked` (a send let through would start a cooldown in its place,
    /// ending the lock that wrong codes set), `too_many_requests` (decided before any policy).
    func lintObserve(where prefix: String) throws(ConfigurationError) {
        if observe.contains(.locked) {
            throw ConfigurationError(
                field: prefix + "observe",
                message: "\"locked\" cannot be observed: a send let through would end the lock that wrong codes set (observe `cooldown` and `max_sends` instead)")
        }
        if let rule = DecisionReason.allCases.first(where: { observe.contains($0) && !$0.row.observable }) {
            throw ConfigurationError(field: prefix + "observe", message: "\"\(rule.rawValue)\" cannot be observed: it is decided in the gate's memory, before the rules that can")
        }
    }

    /// Checks the budgets (`country_max_sends`, `max_sends_total`) and limits, naming the field.
    func lintBudgets(where prefix: String) throws(ConfigurationError) {
        for (destination, budget) in countryMaxSends.sorted(by: { $0.key < $1.key }) {
            try SendBudget.lintDestination(destination, field: prefix + "country-max-sends")
            try budget.lint(field: prefix + "country-max-sends")
        }
        try maxSendsTotal?.lint(field: prefix + "max-sends-total")
        for limit in limits { try limit.lint(field: prefix + "limit " + limit.name) }
        try SendLimit.lintNames(limits, field: prefix + "limit")
    }

    /// Whether `limit` runs in observe mode: its own `observe`, or its reason's.
    public func observes(_ limit: SendLimit) -> Bool {
        limit.observe || observes(limit.reason)
    }
}
