import Foundation
import GateRuntime

/// The two renderings of an option list, `--help` and the table in docs/configuration.md, and the
/// command line's wording of a `ConfigurationError` (a setting's field becomes its flag).
enum OptionHelp {
    /// The `--help` text for a command.
    static func text(usage: String, summary: String, options: [Option]) -> String {
        var lines = ["usage: \(usage)", "", summary, "", "options (each also read from its environment variable):"]
        for option in options {
            let flag = "--\(option.name)" + (option.placeholder.map { " \($0)" } ?? "")
            let fallback = option.defaultValue.map { " (default: \($0))" } ?? ""
            lines.append("  \(padded(flag)) \(plain(option.help))\(fallback)")
            lines.append("  \(padded("")) env \(option.environmentName)")
        }
        return lines.joined(separator: "\n")
    }

    /// The options as the Markdown table of docs/configuration.md, row for row.
    static func markdownTable(_ options: [Option]) -> String {
        var lines = ["| option | default | meaning |", "|---|---|---|"]
        for option in options {
            let flag = "--\(option.name)" + (option.placeholder.map { " \($0)" } ?? "")
            let fallback = option.documentedDefault ?? option.defaultValue.map { "`\($0)`" } ?? "none"
            lines.append("| `\(flag)` | \(fallback) | \(option.help) |")
        }
        return lines.joined(separator: "\n")
    }

    /// `--cooldown: ...` for a setting the command line has a flag for, `policy file,
    /// purposes.login.max-sends: ...` for a field of the policy file.
    static func describe(_ error: ConfigurationError, options: [Option]) -> String {
        guard !error.isPolicyFileField else { return error.description }
        func flag(_ field: String) -> String {
            options.contains { $0.name == field } ? "--\(field)" : field
        }
        var text = "\(flag(error.field)): \(error.message)"
        if !error.remedies.isEmpty {
            let remedies = error.remedies.map { field in
                options.first { $0.name == field }.map { "--\(field) (\($0.environmentName))" } ?? field
            }
            text += "; use " + remedies.joined(separator: ", ")
        }
        return text
    }

    /// Markdown as a terminal shows it: `code` in quotes, [links](#anchor) as their words.
    static func plain(_ markdown: String) -> String {
        var result = ""
        var rest = Substring(markdown)
        while let open = rest.firstIndex(of: "[") {
            result += rest[..<open]
            let afterOpen = rest[rest.index(after: open)...]
            guard let close = afterOpen.firstIndex(of: "]"), afterOpen[afterOpen.index(after: close)...].hasPrefix("("),
                  let end = afterOpen[close...].firstIndex(of: ")") else {
                result += "["
                rest = afterOpen
                continue
            }
            result += afterOpen[..<close]
            rest = afterOpen[afterOpen.index(after: end)...]
        }
        result += rest
        return result.replacingOccurrences(of: "`", with: "'")
    }

    private static func padded(_ text: String, to width: Int = 26) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
