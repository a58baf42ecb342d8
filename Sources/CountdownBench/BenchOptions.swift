/// Command-line options: `--countdowns N --seconds S`, plus the internal `--phase` used
/// when the bench runs each measurement in a child process of its own.
struct BenchOptions {
    var countdowns = 100_000
    var seconds = 5
    var phase: BenchPhase?
    var seed: UInt64 = 2_024

    static let usage = "usage: CountdownBench [--countdowns N] [--seconds S]"

    init(arguments: [String]) throws(BenchUsageError) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let text = rest.popFirst() else { throw BenchUsageError(message: "\(flag) needs a value") }
            switch flag {
            case "--countdowns", "--seconds":
                guard let value = Int(text), value > 0 else { throw BenchUsageError(message: "bad \(flag) \(text)") }
                if flag == "--seconds" { seconds = value } else { countdowns = value }
            case "--phase":
                guard let value = BenchPhase(rawValue: text) else { throw BenchUsageError(message: "bad --phase \(text)") }
                phase = value
            default:
                throw BenchUsageError(message: "unknown option \(flag)")
            }
        }
    }
}

/// The two things measured.
enum BenchPhase: String, CaseIterable {
    /// One `CountdownCenter` ticking every countdown.
    case engine
    /// One repeating 1 s `DispatchSourceTimer` per countdown, as the original apps did.
    case baseline
}

struct BenchUsageError: Error {
    let message: String
}

enum BenchExit: Int32 {
    case success = 0
    case tooSlow = 1
    case usage = 2
}
