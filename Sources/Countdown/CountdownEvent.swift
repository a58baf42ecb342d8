/// What a subscription receives: the displayed value each time it changes, then
/// `finished` exactly once, after which nothing more arrives.
public enum CountdownEvent: Hashable, Sendable {
    /// The displayed value, never zero (a running countdown never shows 0).
    case value(CountdownValue)
    /// The countdown is over (its deadline passed, perhaps while nobody watched, or it was
    /// cancelled, or it was never started): a resend may go ahead.
    case finished
}
