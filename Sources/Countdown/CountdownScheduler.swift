/// Wakes a ``CountdownCenter`` once, at an instant of the center's clock.
///
/// This is the whole contract between the engine and whatever drives it: a
/// `DispatchSourceTimer` (``DispatchCountdownScheduler``), a virtual clock in tests
/// (``VirtualClock``), or an event loop's own timer (a libevent `evtimer` in the HTTP
/// server). The center keeps at most one wake-up outstanding, cancels it before asking for
/// another, and ignores a wake-up that arrives after it was cancelled, so an
/// implementation may be simple:
///
/// - Call `fire` once, at or after `instant`, on any thread (calling early is harmless: the
///   center re-arms). A center given no callback queue delivers its events on that thread.
/// - Never call `fire` synchronously from inside `schedule`: the center holds its lock there.
/// - `cancel()` on the returned value should stop the call if it has not happened yet.
public protocol CountdownScheduler: Sendable {
    /// Arranges one call of `fire` at or after `instant`.
    func schedule(at instant: CountdownInstant, _ fire: @escaping @Sendable () -> Void) -> any CountdownWakeUp
}

/// A pending wake-up returned by ``CountdownScheduler/schedule(at:_:)``.
public protocol CountdownWakeUp: Sendable {
    /// Stops the wake-up if it has not fired yet. Calling it again, or after it fired, does nothing.
    func cancel()
}
