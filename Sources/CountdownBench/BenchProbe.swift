import Countdown
import Foundation

/// Process CPU time and resident memory, read the same way for both phases.
enum BenchProbe {
    /// CPU time of the whole process (all threads), in nanoseconds.
    static func cpuNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Resident set size in bytes (0 where `/proc/self/statm` does not exist).
    static func residentBytes() -> Int64 {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return 0
        #endif
    }
}

/// What one phase measured, passed from child to parent as one line of text.
struct PhaseResult {
    var countdowns: Int
    var cpuNanoseconds: Int64
    var displayedChanges: Int64
    var residentBytes: Int64

    var nanosecondsPerChange: Double {
        displayedChanges == 0 ? .infinity : Double(cpuNanoseconds) / Double(displayedChanges)
    }

    var bytesPerCountdown: Double { Double(residentBytes) / Double(countdowns) }

    var line: String {
        "RESULT \(countdowns) \(cpuNanoseconds) \(displayedChanges) \(residentBytes)"
    }
}

extension PhaseResult {
    init?(line: Substring) {
        let fields = line.split(separator: " ")
        guard fields.count == 5, fields[0] == "RESULT", let countdowns = Int(fields[1]),
              let cpu = Int64(fields[2]), let changes = Int64(fields[3]), let bytes = Int64(fields[4])
        else { return nil }
        self.init(countdowns: countdowns, cpuNanoseconds: cpu, displayedChanges: changes, residentBytes: bytes)
    }
}

/// Deadlines spread over 1–120 s with random milliseconds, the same for both phases.
func benchRemainingMilliseconds(count: Int, seed: UInt64) -> [Int64] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in 1_000 + Int64(random.next() % 119_001) }
}
