/// Which limit refused a send (`DecisionReason`). When several do, the one that ends last.
/// Here, beside the policies, since a policy names the rules it observes by these.
///
/// The table of reasons (docs/internals.md): a new case is added here, with its `row` and
/// `quota` (which do not build without it); its status is a refusal's (429), the metrics
/// count and show it by itself, and `OpenAPIDocumentTests` fails until deploy/openapi.yaml
/// and docs/API.md's table name it.
public enum DecisionReason: String, Sendable, CaseIterable {
    case cooldown
    case maxSends = "max_sends"
    case ipLimit = "ip_limit"
    case locked
    case countryLimit = "country_limit"
    case globalLimit = "global_limit"
    case suspectedPumping = "suspected_pumping"
    case tooManyRequests = "too_many_requests"
    case outsideSendHours = "outside_send_hours"

    /// What the docs and the checks say of a reason: one row of the table of reasons.
    public struct Row: Sendable {
        /// Whether a policy's `observe` may name it: computed and reported, never refusing.
        /// Not a lock (a send let through would end it), nor the request rate (the gate's,
        /// not a policy's).
        public let observable: Bool
        /// The quota `q` of `RateLimit-Policy` (`quota(policy:budgetLimit:sendsInWindow:)`), in words.
        public let quota: String
        /// When it refuses, in one line (docs/API.md's table).
        public let summary: String
    }

    /// This reason's row of the table.
    public var row: Row {
        switch self {
        case .cooldown: Row(observable: true, quota: "1", summary: "the number's cooldown still runs")
        case .maxSends: Row(observable: true, quota: "`max_sends`", summary: "the number had its `max_sends` in the window")
        case .ipLimit: Row(observable: true, quota: "`ip_max_sends`", summary: "the `client_ip` had its `ip_max_sends` in its window")
        case .locked:
            Row(observable: false, quota: "`max_failed_checks`",
                summary: "wrong codes locked the number (`lockout_scope number`); named whatever else refuses")
        case .countryLimit:
            Row(observable: true, quota: "the budget that was full",
                summary: "the destination's budget (`country_max_sends`: its region's or calling code's) is spent, decided before the number is asked")
        case .globalLimit:
            Row(observable: true, quota: "the budget", summary: "the total budget (`max_sends_total`) is spent, decided before the number is asked")
        case .suspectedPumping:
            Row(observable: true, quota: "`pumping_min_sends`",
                summary: "the number's destination prefix sends codes that are not verified (the SMS-pumping guard), decided before the number's own limits")
        case .tooManyRequests:
            Row(observable: false, quota: "N of `--ip-max-requests N/D`",
                summary: "the `client_ip` made its `--ip-max-requests`, allowed or not, counted in the gate's memory before anything else")
        case .outsideSendHours:
            Row(observable: false, quota: "1", summary: "the purpose's `send_hours` have not begun, decided before Redis is asked")
        }
    }

    /// The quota `q` of `RateLimit-Policy` on a refusal by this reason: the sends the limit
    /// that refused allows (one a cooldown) under `policy`; `budgetLimit` is the decision's
    /// (a budget's or the request rate's), `sendsInWindow` what a cap without a policy counts.
    /// A counted limit's refusal carries its own figure (`budgetLimit`: a budget, a limit
    /// written as data), whatever its reason.
    public func quota(policy: Policy, budgetLimit: Int?, sendsInWindow: Int) -> Int {
        if let budgetLimit { return budgetLimit }
        return switch self {
        case .cooldown: 1
        case .maxSends: policy.maxSends ?? sendsInWindow
        case .ipLimit: policy.ipMaxSends ?? 1
        case .locked: policy.maxFailedChecks
        case .countryLimit, .globalLimit, .tooManyRequests, .outsideSendHours: 1
        case .suspectedPumping: policy.pumping.minSends ?? 1
        }
    }
}
