import GateRuntime

/// The top-level members of a JSON object body, read strictly (RFC 8259): bounded nesting,
/// valid UTF-8, anything malformed refused (400 `invalid_json`), not guessed at. Only
/// strings are kept: numbers, booleans and nested values are checked, never read.
struct JSONFields {
    enum Value: Equatable {
        case string(String)
        case null
        /// A number, a boolean, an object or an array: valid, and not a string.
        case other
    }

    static let maximumDepth = 32

    private(set) var members: [(key: String, value: Value)] = []

    init(parsing bytes: [UInt8]) throws(APIError) {
        members.reserveCapacity(4)
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{") else {
            if reader.atEnd { throw .malformed("the body is empty") }
            _ = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.atEnd else { throw .malformed("unexpected text after the JSON value") }
            throw .invalidJSON("the body must be a JSON object")
        }
        try reader.container(depth: 0, unclosed: "expected ',' or '}'") { members.append(($0, $1)) }
        reader.skipWhitespace()
        guard reader.atEnd else { throw .malformed("unexpected text after the JSON object") }
    }

    /// The member's value; a duplicated name counts as ambiguous and is refused.
    func value(_ key: String) throws(APIError) -> Value? {
        var found: Value?
        for member in members where member.key == key {
            if found != nil { throw .invalidJSON("the member \"\(key)\" appears twice") }
            found = member.value
        }
        return found
    }

    /// The member `name` as a string; nil when absent or null, unless `required`.
    func string(_ name: String, required: Bool = false) throws(APIError) -> String? {
        switch try value(name) {
        case .string(let text)?: return text
        case nil, .null?:
            if required { throw .missingField("the body needs \"\(name)\"") }
            return nil
        default: throw .invalidField("\"\(name)\" must be a string")
        }
    }
}

extension APIError {
    /// A body that is not valid JSON, and why.
    static func malformed(_ reason: String) -> APIError { .invalidJSON("the body is not valid JSON: \(reason)") }
}

private struct Reader {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[index] }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    mutating func value(depth: Int) throws(APIError) -> JSONFields.Value {
        guard depth <= JSONFields.maximumDepth else { throw .malformed("nested deeper than \(JSONFields.maximumDepth) levels") }
        skipWhitespace()
        guard let byte = peek else { throw .malformed("unexpected end of the body") }
        switch byte {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "{"), UInt8(ascii: "["): try container(depth: depth)
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw .malformed("unexpected character at byte \(index)")
        }
        return .other
    }

    private mutating func literal(_ word: StaticString) throws(APIError) {
        let length = word.utf8CodeUnitCount
        guard index + length <= bytes.count else { throw .malformed("unexpected end of the body") }
        let matches = word.withUTF8Buffer { expected in bytes[index..<(index + length)].elementsEqual(expected) }
        guard matches else { throw .malformed("unexpected word at byte \(index)") }
        index += length
    }

    private mutating func number() throws(APIError) {
        let start = index
        func bad() -> APIError { .malformed("bad number at byte \(start)") }
        _ = consume(UInt8(ascii: "-"))
        guard let first = peek, Self.digits.contains(first) else { throw bad() }
        if first == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        if consume(UInt8(ascii: ".")) {
            guard skipDigits() > 0 else { throw bad() }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw bad() }
        }
    }

    private static let digits = UInt8(ascii: "0")...UInt8(ascii: "9")

    @discardableResult
    private mutating func skipDigits() -> Int {
        let start = index
        while let byte = peek, Self.digits.contains(byte) { index += 1 }
        return index - start
    }

    /// Reads the object or array at `index`, handing an object's members to `member`;
    /// `unclosed` names a missing `,` or closing bracket.
    mutating func container(depth: Int, unclosed: String = "unclosed container",
                            _ member: (String, JSONFields.Value) -> Void = { _, _ in }) throws(APIError) {
        let open = bytes[index]
        let close = open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
        index += 1
        skipWhitespace()
        if consume(close) { return }
        while true {
            var key = ""
            if open == UInt8(ascii: "{") {
                skipWhitespace()
                guard peek == UInt8(ascii: "\"") else { throw .malformed("expected a member name at byte \(index)") }
                key = try string()
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { throw .malformed("expected ':' at byte \(index)") }
            }
            member(key, try value(depth: depth + 1))
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            guard consume(close) else { throw .malformed("\(unclosed) at byte \(index)") }
            return
        }
    }

    mutating func string() throws(APIError) -> String {
        index += 1  // opening quote
        // Most strings have no escape: made from their bytes, with no buffer in between.
        let start = index
        while let byte = peek, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 { index += 1 }
        if peek == UInt8(ascii: "\"") {
            index += 1
            return try bytes.withUnsafeBufferPointer { all throws(APIError) in try Self.text(.init(rebasing: all[start..<index - 1])) }
        }
        var scalars = Array(bytes[start..<index])
        while true {
            guard let byte = peek else { throw .malformed("unterminated string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return try scalars.withUnsafeBufferPointer { buffer throws(APIError) in try Self.text(buffer) }
            case UInt8(ascii: "\\"):
                guard let escape = peek else { throw .malformed("unterminated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"): try unicodeEscape(into: &scalars)
                default: throw .malformed("bad escape at byte \(index - 1)")
                }
            case 0..<0x20: throw .malformed("a control character inside a string at byte \(index - 1)")
            default: scalars.append(byte)
            }
        }
    }

    /// A string's bytes as text, refused unless valid UTF-8. ASCII (almost every field)
    /// skips the generic validation's run-time type lookups.
    private static func text(_ utf8: UnsafeBufferPointer<UInt8>) throws(APIError) -> String {
        if utf8.allSatisfy({ $0 < 0x80 }) { return String(decoding: utf8, as: UTF8.self) }
        guard let text = String(validating: utf8, as: UTF8.self) else { throw .malformed("a string is not valid UTF-8") }
        return text
    }

    private mutating func hex4() throws(APIError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw .malformed("bad \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = PercentDecoding.hexValue(bytes[index]) else { throw .malformed("bad \\u escape") }
            index += 1
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func unicodeEscape(into scalars: inout [UInt8]) throws(APIError) {
        var code = try hex4()
        if (0xD800...0xDBFF).contains(code) {
            guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")) else { throw .malformed("lone surrogate in \\u escape") }
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw .malformed("lone surrogate in \\u escape") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(code) {
            throw .malformed("lone surrogate in \\u escape")
        }
        guard let scalar = Unicode.Scalar(code) else { throw .malformed("bad \\u escape") }
        scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
    }
}
