import Synchronization

/// One worker's allowed sends and `verified` outcomes by country calling code, for
/// `/metrics`: conversion by calling code is the ratio of their rates
/// (`rate(resendgate_verifications_by_calling_code_total[1h]) /
/// rate(resendgate_sends_by_calling_code_total[1h])`), summed over gates by Prometheus.
/// Counted in the process, so they cost Redis nothing, for every purpose whether its
/// pumping guard is on or not. Calling codes are 1 to 3 digits: the label set is bounded
/// by 999 values per metric (about 215 are assigned), whatever the traffic.
final class CallingCodeCounters: Sendable {
    /// The largest calling code (three digits).
    static let largestCode = 999

    private let sends: InlineArray<1000, Atomic<Int64>> = InlineArray { _ in Atomic(0) }
    private let verifications: InlineArray<1000, Atomic<Int64>> = InlineArray { _ in Atomic(0) }

    /// Counts an allowed send to a number of `code`.
    func addSend(callingCode code: Int) {
        guard (1...Self.largestCode).contains(code) else { return }
        sends[code].wrappingAdd(1, ordering: .relaxed)
    }

    /// Counts a `verified` outcome of a number of `code`.
    func addVerification(callingCode code: Int) {
        guard (1...Self.largestCode).contains(code) else { return }
        verifications[code].wrappingAdd(1, ordering: .relaxed)
    }

    /// The samples of both metrics over `workers`, for calling codes with any count.
    static func samples(_ workers: [CallingCodeCounters]) -> (sends: [(String, String)], verifications: [(String, String)]) {
        var sendSamples: [(String, String)] = []
        var verificationSamples: [(String, String)] = []
        for code in 1...largestCode {
            let sent = workers.reduce(0) { $0 + $1.sends[code].load(ordering: .relaxed) }
            let verified = workers.reduce(0) { $0 + $1.verifications[code].load(ordering: .relaxed) }
            guard sent > 0 || verified > 0 else { continue }
            sendSamples.append(("{calling_code=\"\(code)\"}", "\(sent)"))
            verificationSamples.append(("{calling_code=\"\(code)\"}", "\(verified)"))
        }
        return (sendSamples, verificationSamples)
    }
}
