import Foundation
import GateRuntime
import ResendGate

/// One command-line option: its flag (`--name`), its environment variable
/// (`RESENDGATE_<NAME>`), its documentation, and how its text becomes a typed field of
/// `Settings`. Its default is that field's initial value, which is the library's own
/// `static let`, so the help and docs/configuration.md print the default the library uses.
struct Option {
    let name: String
    /// What the value looks like (`D`, `N`, `URL`); nil for a switch, which takes none.
    let placeholder: String?
    /// Markdown, as the table in docs/configuration.md shows it; `--help` prints it as plain text.
    let help: String
    /// How the table in docs/configuration.md writes the default when it is not a value (`cores`), or
    /// what leaving the option out means (`every region`).
    var documentedDefault: String?
    /// Overrides the environment variable's name where the contract names it otherwise.
    var environmentSuffix: String?
    /// Given more than once, its texts are joined with `;` (the environment's text may hold
    /// several so), not replaced: `--limit`.
    var repeats = false
    /// Reads `text` into the option's field; throws naming the option's field.
    let apply: (inout Settings, String) throws(ConfigurationError) -> Void
    /// The default, as a user would write it; nil when there is none.
    let defaultText: (Settings) -> String?

    var isSwitch: Bool { placeholder == nil }

    var environmentName: String {
        "RESENDGATE_" + (environmentSuffix ?? name.uppercased().replacingOccurrences(of: "-", with: "_"))
    }

    /// The default this build uses, as `--help` prints it.
    var defaultValue: String? { defaultText(Settings()) }

    func with(documentedDefault: String? = nil, environmentSuffix: String? = nil, repeats: Bool? = nil) -> Option {
        var copy = self
        copy.documentedDefault = documentedDefault ?? copy.documentedDefault
        copy.environmentSuffix = environmentSuffix ?? copy.environmentSuffix
        copy.repeats = repeats ?? copy.repeats
        return copy
    }
}

extension Option {
    /// Any value with its own reader and writer (by default none: `--help` shows no default).
    static func value<Value>(
        _ name: String, _ field: WritableKeyPath<Settings, Value>, placeholder: String?, help: String,
        parse: @escaping (String) throws(ConfigurationError) -> Value, render: @escaping (Value) -> String? = { _ in nil }
    ) -> Option {
        Option(
            name: name, placeholder: placeholder, help: help,
            apply: { settings, text throws(ConfigurationError) in settings[keyPath: field] = try parse(text) },
            defaultText: { render($0[keyPath: field]) })
    }

    /// `250ms`, `60`, `60s`, `5m`, `24h`, `7d`.
    static func duration(_ name: String, _ field: WritableKeyPath<Settings, Duration>, help: String) -> Option {
        value(name, field, placeholder: "D", help: help,
              parse: { text throws(ConfigurationError) in try DurationParser.parse(text, field: name) },
              render: DurationParser.format)
    }

    /// A whole number in `range`.
    static func count(_ name: String, _ field: WritableKeyPath<Settings, Int>, in range: ClosedRange<Int>, help: String) -> Option {
        value(name, field, placeholder: "N", help: help,
              parse: { text throws(ConfigurationError) in try wholeNumber(text, in: range, field: name) }, render: { "\($0)" })
    }

    /// A whole number in `range`, or none when left out.
    static func count(_ name: String, _ field: WritableKeyPath<Settings, Int?>, in range: ClosedRange<Int>, help: String) -> Option {
        value(name, field, placeholder: "N", help: help,
              parse: { text throws(ConfigurationError) in try wholeNumber(text, in: range, field: name) }, render: { $0.map { "\($0)" } })
    }

    static func text(_ name: String, _ field: WritableKeyPath<Settings, String>, placeholder: String, help: String) -> Option {
        value(name, field, placeholder: placeholder, help: help, parse: { $0 }, render: { $0 })
    }

    /// Text that may be left out; an empty value counts as left out.
    static func text(_ name: String, _ field: WritableKeyPath<Settings, String?>, placeholder: String, help: String) -> Option {
        value(name, field, placeholder: placeholder, help: help, parse: { $0.isEmpty ? nil : $0 }, render: { $0 })
    }

    /// `a,b,c`, spaces trimmed; an empty value is an empty list, not a missing one.
    static func list(_ name: String, _ field: WritableKeyPath<Settings, [String]?>, placeholder: String, help: String) -> Option {
        value(name, field, placeholder: placeholder, help: help, parse: { commaSeparated($0) },
              render: { $0?.joined(separator: ",") })
    }

    /// A switch: present (or `true`, `1`, `yes` in the environment) turns it on.
    static func toggle(_ name: String, _ field: WritableKeyPath<Settings, Bool>, help: String) -> Option {
        value(name, field, placeholder: nil, help: help, parse: { ["true", "1", "yes"].contains($0.lowercased()) },
              render: { $0 ? "on" : nil })
            .with(documentedDefault: "off")
    }

    /// One of an enumeration's raw values.
    static func choice<Choice: RawRepresentable<String> & CaseIterable>(
        _ name: String, _ field: WritableKeyPath<Settings, Choice>, placeholder: String, help: String
    ) -> Option {
        value(name, field, placeholder: placeholder, help: help, parse: { text throws(ConfigurationError) in
            guard let choice = Choice(rawValue: text) else {
                let names = Choice.allCases.map(\.rawValue)
                throw ConfigurationError(
                    field: name, message: "use \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
            }
            return choice
        }, render: { $0.rawValue })
    }

    static func wholeNumber(_ text: String, in range: ClosedRange<Int>, field: String) throws(ConfigurationError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(
                field: field, message: "\"\(text)\" is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    static func commaSeparated(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
