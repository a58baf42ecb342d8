/// What a phone number may be written with, checked before libphonenumber sees it.
///
/// libphonenumber finds a number inside free text: it skips what comes before the
/// first digit or plus sign and drops what follows the last digit, so
/// `"Tel.: +44 7911 123456!!!"` would parse. The gate refuses text around a number
/// instead: a field that takes anything is a field an attacker can vary without end
/// (cache keys, log lines), and an extension (`ext. 12`, `#12`), a vanity spelling
/// (`1-800-FLOWERS`) or a label is no SMS destination. What remains is every spelling
/// of the number itself, and all of them still give one E.164 key:
///
/// - digits of any script (`0-9`, full-width `０-９`, Arabic-Indic ...), which
///   libphonenumber reads as ASCII digits;
/// - one plus sign (`+` or `＋`) before the first digit;
/// - the separators libphonenumber accepts between digits (spaces, `-`, `.`, `/`,
///   `~`, brackets, their full-width and typographic forms), except its `x`;
/// - a leading `tel:` (RFC 3966, any case) with nothing after the number.
enum PhoneNumberSpelling {
    /// Whether `text` is one number and nothing else.
    static func isNumberOnly(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        while let first = scalars.first, isSpace(first) { scalars = scalars.dropFirst() }
        if hasTelPrefix(scalars) { scalars = scalars.dropFirst(4) }
        var sawDigit = false
        var sawPlus = false
        for scalar in scalars {
            if scalar.properties.numericType == .decimal {
                sawDigit = true
            } else if scalar == "+" || scalar == "\u{FF0B}" {
                guard !sawDigit, !sawPlus else { return false }
                sawPlus = true
            } else if !isSeparator(scalar) {
                return false
            }
        }
        return true
    }

    /// `tel:` in any case.
    private static func hasTelPrefix(_ scalars: Substring.UnicodeScalarView.SubSequence) -> Bool {
        let lowered: [UInt32] = [0x74, 0x65, 0x6C]  // t e l
        var index = scalars.startIndex
        for letter in lowered {
            guard index < scalars.endIndex, scalars[index].value | 0x20 == letter,
                  (0x41...0x7A).contains(scalars[index].value) else { return false }
            index = scalars.index(after: index)
        }
        return index < scalars.endIndex && scalars[index] == ":"
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20, 0x09, 0xA0, 0xAD, 0x200B, 0x2060, 0x3000: true
        default: false
        }
    }

    /// libphonenumber's `VALID_PUNCTUATION` without `x`.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        if isSpace(scalar) { return true }
        switch scalar.value {
        case 0x2D, 0x2E, 0x2F, 0x28, 0x29, 0x5B, 0x5D, 0x7E:  // - . / ( ) [ ] ~
            return true
        case 0x2010...0x2015, 0x2212, 0x30FC, 0xFF0D...0xFF0F, 0xFF08, 0xFF09, 0xFF3B, 0xFF3D, 0x2053, 0x223C, 0xFF5E:
            return true
        default:
            return false
        }
    }
}
