import ResendGate

/// The exit codes of `resendgate`, as docs/API.md and `resendgate --help` promise them.
enum ExitCode: Int32 {
    /// Allowed, or the command did what it was asked.
    case success = 0
    /// The store (Redis) could not be reached or did not answer in time, or may evict keys.
    case storeUnavailable = 1
    /// The input or the options were wrong.
    case badInput = 2
    /// The send was denied: a cooldown or a policy is in the way.
    case denied = 3

    init(for error: GateError) {
        self = error.isPolicyDenial ? .denied : error.isBadInput ? .badInput : .storeUnavailable
    }
}
