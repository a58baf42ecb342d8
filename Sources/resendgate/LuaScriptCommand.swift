import Foundation
import ResendGate

/// `resendgate lua-script NAME [--scripts DIR]`, for developers (not in the usage: docs/development.md):
/// prints script NAME as Redis runs it, made by the gate's own linker (`GateScripts.text(of:)`),
/// from the scripts compiled in or from the `.lua` files of DIR (an old revision's, say).
enum LuaScriptCommand {
    static let usage = """
        usage: resendgate lua-script NAME [--scripts DIR]
          NAME: a script of Sources/ResendGate/Gate/Scripts (peek, verify, budget-take, ...), or reserve
          and reserve-guarded (with the fraud guard), each file's policy block as written.
        """

    static func run(_ arguments: [String]) throws -> ExitCode {
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
            print(usage)
            return .success
        }
        var names: [String] = []
        var directory: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--scripts" {
                guard let value = rest.popFirst() else { throw UsageError("--scripts needs a folder\n\(usage)") }
                directory = value
            } else {
                names.append(argument)
            }
        }
        guard names.count == 1 else { throw UsageError("lua-script takes one script name\n\(usage)") }
        var files = GateScripts.files
        if let directory {
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
                throw UsageError("--scripts: cannot read the folder \(directory)")
            }
            files = withListedParts(entries.filter { $0.hasSuffix(".lua") }.reduce(into: [:]) { files, name in
                files[String(name.dropLast(".lua".count))] = FileManager.default.contents(atPath: directory + "/" + name).map { [UInt8]($0) }
            })
        }
        guard let text = GateScripts.text(of: names[0], files: files) else {
            printError("no script \(names[0]) in \(directory ?? "the scripts compiled in")")
            return .badInput
        }
        print(text, terminator: "")
        return .success
    }

    /// Scripts of revisions 67c439b to 9cc60e9 named their parts on their first line
    /// (`-- parts: NAME...`), put before the file, each followed by a blank line.
    static func withListedParts(_ files: [String: [UInt8]]) -> [String: [UInt8]] {
        files.mapValues { file in
            let first = String(decoding: file.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            guard first.hasPrefix("-- parts: ") else { return file }
            return first.dropFirst("-- parts: ".count).split(separator: " ").flatMap { (files[String($0)] ?? []) + [UInt8(ascii: "\n")] } + file
        }
    }
}
