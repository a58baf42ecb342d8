import Foundation

/// Whether the abuse tests assert RSS bounds. They hold for the builds the tests measure
/// (`deploy/test`'s plain pass); under AddressSanitizer (`deploy/dev/test-asan`, also run by
/// `deploy/dev/test-leaks`, sets `RESENDGATE_SANITIZER`) a process's RSS is mostly shadow memory
/// and freed blocks held in quarantine, hundreds of MB that say nothing about our buffers.
/// Those runs repeat the same attacks to look for memory errors and leaks; the plain pass
/// asserts the bounds.
enum MemoryBounds {
    static let asserted = ProcessInfo.processInfo.environment["RESENDGATE_SANITIZER"] == nil
    /// The bound on a gate's RSS, in MiB: 64 where it is asserted.
    static let residentMiB = asserted ? 64.0 : .infinity
}

/// How long a health check may take while an attack runs. AddressSanitizer makes the gate
/// several times slower on the same two cores (every load and store checked), so its runs
/// allow five times the plain bound: they look for memory errors, the plain pass for speed.
enum ResponsivenessBounds {
    static func healthCheck(_ plain: Duration) -> Duration {
        MemoryBounds.asserted ? plain : plain * 5
    }
}
