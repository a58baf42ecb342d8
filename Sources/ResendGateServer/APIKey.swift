import Foundation
import GateRuntime

/// What an API key may do: each keyed route needs one scope.
public struct APIScopes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `POST /v1/sends`.
    public static let send = APIScopes(rawValue: 1)
    /// `GET`/`HEAD /v1/cooldowns/{phone}` (peek) and every other keyed read.
    public static let read = APIScopes(rawValue: 2)
    /// `DELETE /v1/cooldowns/{phone}` (refund): granted only by name, since a refund
    /// gives a number a send back.
    public static let release = APIScopes(rawValue: 4)
    /// `POST /v1/verifications`: the back end that checks codes reports their outcomes.
    public static let verify = APIScopes(rawValue: 8)

    /// A key that names no scopes: it may send, read and report verifications, not release.
    public static let bare: APIScopes = [.send, .read, .verify]
    /// Every scope: what a gate without keys grants (it listens on loopback only).
    public static let all: APIScopes = [.send, .read, .release, .verify]

    /// The scope names of `--api-keys-file`, in the order `--help` lists them.
    public static let names: [(name: String, scope: APIScopes)] = [
        ("send", .send), ("read", .read), ("release", .release), ("verify", .verify),
    ]
}

/// A bearer key and what it may do.
public struct APIKey: Sendable, Equatable {
    public let secret: String
    public let scopes: APIScopes

    public init(_ secret: String, scopes: APIScopes = .bare) {
        self.secret = secret
        self.scopes = scopes
    }

    /// One line of `--api-keys-file`: `KEY` (`bare`) or `KEY send,read,release`. An unknown
    /// or empty scope name is refused; the key itself is never quoted.
    public init(line: String) throws(ConfigurationError) {
        let parts = line.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
        guard let secret = parts.first else { throw ConfigurationError(field: "api-keys-file", message: "a key line is empty") }
        guard parts.count == 2 else {
            self.init(String(secret))
            return
        }
        var scopes: APIScopes = []
        for raw in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
            let name = raw.trimmingCharacters(in: .whitespaces)
            guard let known = APIScopes.names.first(where: { $0.name == name }) else {
                let list = APIScopes.names.map(\.name).joined(separator: ", ")
                throw ConfigurationError(
                    field: "api-keys-file", message: name.isEmpty
                        ? "a key's scope list has an empty entry (write them as send,read,release)"
                        : "unknown scope \"\(name.prefix(40))\" (known: \(list))")
            }
            scopes.insert(known.scope)
        }
        self.init(String(secret), scopes: scopes)
    }

    /// Every key of an `--api-keys-file`: one a line, `#` comments, blank lines skipped; a
    /// mistake is named with its line number.
    public static func parseFile(_ text: String) throws(ConfigurationError) -> [APIKey] {
        var keys: [APIKey] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                keys.append(try APIKey(line: line))
            } catch {
                throw ConfigurationError(field: "api-keys-file", message: "line \(index + 1): \(error.message)")
            }
        }
        return keys
    }
}
