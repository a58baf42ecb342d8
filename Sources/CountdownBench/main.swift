import Foundation

// Measures the countdown engine against one DispatchSourceTimer per countdown.
do {
    let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    switch options.phase {
    case .engine?:
        print(runEnginePhase(options).line)
    case .baseline?:
        print(runBaselinePhase(options).line)
    case nil:
        let engine = try BenchRunner.runChild(.engine, options)
        let baseline = try BenchRunner.runChild(.baseline, options)
        let ratio = BenchRunner.report(engine: engine, baseline: baseline, options: options)
        exit(ratio >= 10 ? BenchExit.success.rawValue : BenchExit.tooSlow.rawValue)
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n\(BenchOptions.usage)\n".utf8))
    exit(BenchExit.usage.rawValue)
}
