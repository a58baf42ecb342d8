import Foundation

/// Runs each phase in a fresh child process (so neither inherits the other's heap or
/// threads), then prints the comparison.
enum BenchRunner {
    static func runChild(_ phase: BenchPhase, _ options: BenchOptions) throws -> PhaseResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = ["--countdowns", "\(options.countdowns)", "--seconds", "\(options.seconds)",
                             "--phase", phase.rawValue]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0,
              let result = output.split(separator: "\n").lazy.compactMap(PhaseResult.init(line:)).first
        else { throw BenchUsageError(message: "\(phase) phase failed: \(output)") }
        return result
    }

    static func report(engine: PhaseResult, baseline: PhaseResult, options: BenchOptions) -> Double {
        let ratio = baseline.nanosecondsPerChange / engine.nanosecondsPerChange
        print("countdowns: \(options.countdowns), deadlines 1–120 s, measured \(options.seconds) s each")
        print(row("", "CPU ms", "changes", "ns/change", "bytes/countdown"))
        for (name, result) in [("engine (CountdownCenter)", engine), ("baseline (timer each)", baseline)] {
            print(row(name, String(format: "%.1f", Double(result.cpuNanoseconds) / 1e6), "\(result.displayedChanges)",
                      String(format: "%.0f", result.nanosecondsPerChange), String(format: "%.0f", result.bytesPerCountdown)))
        }
        print(String(format: "engine is %.1f× cheaper in CPU per displayed change (needs ≥ 10×)", ratio))
        print(String(format: "memory: engine %.0f vs baseline %.0f bytes per countdown (RSS delta)",
                     engine.bytesPerCountdown, baseline.bytesPerCountdown))
        return ratio
    }

    private static func row(_ columns: String...) -> String {
        let widths = [26, 10, 10, 11, 16]
        return zip(columns, widths).map { text, width in
            text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
        }.joined(separator: " ")
    }

    private static func executablePath() -> String {
        #if os(Linux)
        return "/proc/self/exe"
        #else
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
        #endif
    }
}
