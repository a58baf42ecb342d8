import Foundation
import ResendGate
import ResendGateServer

/// What `send`, `status` and `release` share: one phone number, a purpose, and a
/// gate built from the common options.
struct NumberCommand {
    let phone: String
    let purpose: String
    let gate: Gate
    let settings: Settings

    /// Reads the command line; nil when it only asked for `--help` (printed).
    static func make(
        name: String, arguments: [String], environment: [String: String], summary: String,
        extraOptions: [Option] = []
    ) throws -> NumberCommand? {
        let options = Settings.common + Settings.perNumber + extraOptions
        let reading = try CommandLineReading(arguments: arguments, environment: environment, options: options)
        if reading.printHelpIfAsked(usage: "resendgate \(name) PHONE [options]", summary: summary) { return nil }
        guard reading.positional.count == 1 else {
            throw UsageError("\(name) takes exactly one phone number, got \(reading.positional.count) (see --help)")
        }
        let settings = try reading.settings()
        return NumberCommand(
            phone: reading.positional[0], purpose: settings.purpose,
            gate: Gate(configuration: try settings.gateConfiguration()), settings: settings)
    }
}

func printJSON(_ write: (inout JSONWriter) -> Void) {
    var json = JSONWriter()
    write(&json)
    print(json.string)
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data("resendgate: \(message)\n".utf8))
}
