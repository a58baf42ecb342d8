import Foundation
import GateRuntime
import ResendGate

/// `resendgate COMMAND ...`: a thin dispatcher; each command lives in its own file.
let usage = """
    usage: resendgate COMMAND [options]

    commands:
      send PHONE      reserve a send if the cooldown allows (exit 0 allowed, 3 denied)
      status PHONE    show a number's cooldown without consuming it
      release PHONE   end a number's cooldown and refund its send (--max-refunds a window)
      verified PHONE  report the right code: clears its wrong checks
      failed PHONE    report a wrong code: at --max-failed-checks the code is locked
      check PHONE     check a typed code (--code) against the code the gate issued
      serve           run the HTTP server
      watch TOKEN     show "Resend in 42s" for a countdown token, redrawn in place
      --version       print the version (docs/changelog.md)

    Run `resendgate COMMAND --help` for a command's options.
    """

let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment
let code: ExitCode
do {
    switch arguments.first {
    case "send": code = try await SendCommand.run(Array(arguments.dropFirst()), environment: environment)
    case "status": code = try await StatusCommand.run(Array(arguments.dropFirst()), environment: environment)
    case "release": code = try await ReleaseCommand.run(Array(arguments.dropFirst()), environment: environment)
    case "verified": code = try await VerifyCommand.run(.verified, Array(arguments.dropFirst()), environment: environment)
    case "failed": code = try await VerifyCommand.run(.failed, Array(arguments.dropFirst()), environment: environment)
    case "check": code = try await CheckCommand.run(Array(arguments.dropFirst()), environment: environment)
    case "watch": code = try await WatchCommand.run(Array(arguments.dropFirst()), environment: environment)
    case "serve": code = try await ServeCommand.run(Array(arguments.dropFirst()), environment: environment)
    case "lua-script": code = try LuaScriptCommand.run(Array(arguments.dropFirst()))
    case "--version", "version":
        print("resendgate \(ResendGateVersion.description)")
        code = .success
    case "help", "--help", "-h":
        print(usage)
        code = .success
    case nil:
        printError("no command given\n\(usage)")
        code = .badInput
    case let other?:
        printError("unknown command \"\(other)\"\n\(usage)")
        code = .badInput
    }
} catch let error as GateError {
    printError(error.message)
    code = ExitCode(for: error)
} catch let error as ConfigurationError {
    printError(OptionHelp.describe(error, options: Settings.everyOption))
    code = .badInput
} catch let error as UsageError {
    printError(error.description)
    code = .badInput
} catch {
    printError("\(error)")
    code = .storeUnavailable
}
exit(code.rawValue)
