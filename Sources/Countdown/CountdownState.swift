import Foundation

/// What to save so a countdown survives the app being killed: its id and its deadline on
/// the wall clock (a monotonic instant means nothing to the next process).
///
/// Get it from ``CountdownCenter/state(of:)``, store it (it is `Codable`), and hand it to
/// ``CountdownCenter/restore(_:)`` after relaunch; the deadline is converted back to the
/// monotonic clock once, there.
public struct CountdownState: Hashable, Sendable, Codable {
    /// Which countdown.
    public var id: CountdownID
    /// When it ends, on the wall clock.
    public var deadline: Date

    /// Makes a saved state.
    public init(id: CountdownID, deadline: Date) {
        self.id = id
        self.deadline = deadline
    }
}
