import Synchronization

/// One worker's allowed sends and `verified` outcomes by calling code, whose rates'
/// ratio is the conversion, summed over gates by Prometheus. Counted in the process, so
/// Redis pays nothing, for every purpose. Calling codes have 1 to 3 digits: at most 999
/// labels a metric (about 215 assigned), whatever the traffic.
final class CallingCodeCounters: Sendable {
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
