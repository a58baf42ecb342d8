import GateRuntime

/// Numbers that skip every limit (`--test-numbers`), so that CI and QA never trip one:
/// a send to one is answered allowed with `testNumber` set, nothing is recorded in Redis,
/// and the back end knows not to send a real SMS. Each entry is an E.164 number, or one
/// with `/N`: any number of the same length whose digits but the last N are the same
/// (`+15005550000/4` is +1 500 555 0000 to +1 500 555 9999).
///
/// Test numbers are still numbers: input is parsed and canonicalised as for any send, so
/// every spelling of a test number is one, and text that is no valid number is refused.
public struct TestNumbers: Sendable, Equatable {
    /// One entry: the digits that must match, and how many digits follow them.
    struct Range: Sendable, Equatable {
        let prefix: String
        let length: Int
    }

    /// At most this many entries, and at most this many free digits in one.
    public static let maximumEntries = 1_000
    public static let maximumFreeDigits = 6

    let ranges: [Range]

    /// No test numbers.
    public static let none = TestNumbers(ranges: [])

    private init(ranges: [Range]) {
        self.ranges = ranges
    }

    /// Reads `+CCNNN[/N],...`; `field` names the setting in the error.
    public init(parsing text: String, field: String = "test-numbers") throws(ConfigurationError) {
        var ranges: [Range] = []
        for part in text.split(separator: ",").map({ String($0).trimmingSpaces }) where !part.isEmpty {
            let pieces = part.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let number = pieces[0]
            let free = pieces.count == 2 ? Int(pieces[1]) : 0
            guard number.first == "+", (8...16).contains(number.utf8.count),
                  number.utf8.dropFirst().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let free, (0...Self.maximumFreeDigits).contains(free), free < number.utf8.count - 3
            else {
                throw ConfigurationError(
                    field: field,
                    message: "\"\(part)\" is not an E.164 number with an optional /N (at most \(Self.maximumFreeDigits) free last digits), such as +15005550006 or +15005550000/4")
            }
            ranges.append(Range(prefix: String(number.dropLast(free)), length: number.utf8.count))
        }
        guard ranges.count <= Self.maximumEntries else {
            throw ConfigurationError(field: field, message: "at most \(Self.maximumEntries) entries")
        }
        self.ranges = ranges
    }

    /// Whether the canonical `e164` is a test number.
    public func contains(_ e164: String) -> Bool {
        ranges.contains { $0.length == e164.utf8.count && e164.hasPrefix($0.prefix) }
    }

    public var isEmpty: Bool { ranges.isEmpty }
}
