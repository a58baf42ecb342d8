/// The variable names a piece of Lua uses, for `LuaPartTests`: its text without comments and
/// strings, cut into names and symbols. A name after `.` or `:` is a field, and one before
/// `=` inside `{}` a table key: neither is a variable. Scopes are not followed: a name
/// declared `local` anywhere in the text (a `for` variable and a function's parameter too) is
/// the text's own everywhere in it, which is how a part's locals are written.
struct LuaNames {
    /// Declared by the text: `local`, `for` variables, function parameters.
    private(set) var locals: Set<String> = []
    /// Read, not the text's own, before any line that assigns them (an assignment takes
    /// effect after its line: `sends = sends + 1` reads `sends`).
    private(set) var reads: Set<String> = []
    /// Assigned, not the text's own.
    private(set) var assigned: Set<String> = []

    static let keywords: Set<String> = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
        "not", "or", "repeat", "return", "then", "true", "until", "while",
    ]

    init(_ text: String) {
        let tokens = Self.tokens(text)
        var firstRead: [String: Int] = [:], firstAssigned: [String: Int] = [:]
        var braces = 0, i = 0
        func at(_ index: Int) -> String { tokens.indices.contains(index) ? tokens[index].text : "" }
        func isName(_ index: Int) -> Bool { tokens.indices.contains(index) && tokens[index].isName && !Self.keywords.contains(at(index)) }
        func parameters() {  // `(a, b)` after `function [name]`
            guard at(i) == "(" else { return }
            while i < tokens.count && at(i) != ")" {
                if isName(i) { locals.insert(at(i)) }
                i += 1
            }
        }
        while i < tokens.count {
            let token = tokens[i]
            switch token.text {
            case "{": braces += 1; i += 1
            case "}": braces -= 1; i += 1
            case "local", "for":
                i += 1
                if at(i) == "function" {
                    i += 1
                    locals.insert(at(i))
                    i += 1
                    parameters()
                    continue
                }
                while isName(i) {
                    locals.insert(at(i))
                    i += 1
                    guard at(i) == "," else { break }
                    i += 1
                }
            case "function":
                i += 1
                while isName(i) || at(i) == "." || at(i) == ":" { i += 1 }
                parameters()
            case _ where !isName(i) || [".", ":"].contains(at(i - 1)) || braces > 0 && at(i + 1) == "=":
                i += 1
            default:
                // `a, b = …` assigns each name before the `=`; any other use reads.
                var last = i
                while braces == 0 && at(last + 1) == "," && isName(last + 2) { last += 2 }
                if at(last + 1) == "=" {
                    for name in stride(from: i, through: last, by: 2) { firstAssigned[at(name)] = firstAssigned[at(name)] ?? tokens[name].line }
                    i = last + 1
                } else {
                    firstRead[token.text] = firstRead[token.text] ?? token.line
                    i += 1
                }
            }
        }
        reads = Set(firstRead.filter { name, line in !locals.contains(name) && line <= firstAssigned[name] ?? .max }.keys)
        assigned = Set(firstAssigned.keys).subtracting(locals)
    }

    /// Names (keywords included) and symbols with their lines; strings and numbers as `''` and `0`.
    static func tokens(_ text: String) -> [(text: String, line: Int, isName: Bool)] {
        let bytes = Array(text.utf8)
        var tokens: [(text: String, line: Int, isName: Bool)] = []
        var i = 0, line = 1
        func byte(_ index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }
        func isWord(_ b: UInt8) -> Bool { b == UInt8(ascii: "_") || (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") || isDigit(b) }
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        /// Past the long bracket (`[[…]]`, `[==[…]==]`) opening at `start`, or nil.
        func longBracketEnd(_ start: Int) -> Int? {
            guard byte(start) == UInt8(ascii: "[") else { return nil }
            var level = 0
            while byte(start + 1 + level) == UInt8(ascii: "=") { level += 1 }
            guard byte(start + 1 + level) == UInt8(ascii: "[") else { return nil }
            let close = [UInt8(ascii: "]")] + Array(repeating: UInt8(ascii: "="), count: level) + [UInt8(ascii: "]")]
            var j = start + 2 + level
            while j < bytes.count && !bytes[j...].starts(with: close) { j += 1 }
            return min(bytes.count, j + close.count)
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "-") && byte(i + 1) == UInt8(ascii: "-") {
                if let end = longBracketEnd(i + 2) {
                    line += bytes[i..<end].count { $0 == UInt8(ascii: "\n") }
                    i = end
                } else {
                    while i < bytes.count && bytes[i] != UInt8(ascii: "\n") { i += 1 }
                }
            } else if b == UInt8(ascii: "'") || b == UInt8(ascii: "\"") {
                i += 1
                while i < bytes.count && bytes[i] != b { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
                tokens.append(("''", line, false))
            } else if let end = longBracketEnd(i) {
                line += bytes[i..<end].count { $0 == UInt8(ascii: "\n") }
                i = end
                tokens.append(("''", line, false))
            } else if isWord(b) {
                let start = i
                while i < bytes.count && (isWord(bytes[i]) || isDigit(b) && bytes[i] == UInt8(ascii: ".")) { i += 1 }
                tokens.append(isDigit(b) ? ("0", line, false) : (String(decoding: bytes[start..<i], as: UTF8.self), line, true))
            } else {
                if b == UInt8(ascii: "\n") { line += 1 }
                let two = String(decoding: bytes[i..<min(bytes.count, i + 2)], as: UTF8.self)
                let symbol = ["==", "~=", "<=", ">=", "..", "::"].contains(two) ? two : String(UnicodeScalar(b))
                if !(b == UInt8(ascii: " ") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r")) {
                    tokens.append((symbol, line, false))
                }
                i += symbol.utf8.count
            }
        }
        return tokens
    }
}
