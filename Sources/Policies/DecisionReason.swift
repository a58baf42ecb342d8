/// Which limit refused a send (`DecisionReason`). When several do, the one that ends last.
/// Here, beside the policies, since a policy names the rules it observes by these.
public enum DecisionReason: String, Sendable, CaseIterable {
    /// The number's cooldown is still running.
    case cooldown
    /// The number had its `max-sends` in the window.
    case maxSends = "max_sends"
    /// The client IP had its `ip-max-sends` in its window.
    case ipLimit = "ip_limit"
    /// Too many wrong codes were checked for the number: it is locked (`lockout`).
    case locked
    /// The destination region's budget (`country_max_sends`) is spent for its window.
    case countryLimit = "country_limit"
    /// The total budget (`max_sends_total`) is spent for its window.
    case globalLimit = "global_limit"
    /// The number's destination prefix sends codes that are not verified: the
    /// SMS-pumping guard refuses it (`PumpingGuard`).
    case suspectedPumping = "suspected_pumping"
    /// The client address made its `--ip-max-requests` requests, allowed or not: decided
    /// in the gate's memory, before Redis is asked.
    case tooManyRequests = "too_many_requests"
}
