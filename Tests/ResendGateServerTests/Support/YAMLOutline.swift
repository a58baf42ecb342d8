/// The block-mapping outline of a YAML document, enough to read an OpenAPI file's
/// `paths` and `components` without a YAML library: `key:` and `key: value` lines
/// nested by indentation. Sequence items (`- ...`) become children named "-", and
/// the lines of a block scalar (`key: >-`, `key: |`) are skipped.
struct YAMLOutline: CustomStringConvertible {
    let key: String
    let value: String?
    private(set) var children: [YAMLOutline]

    init(parsing text: String) throws {
        var stack: [(indent: Int, node: YAMLOutline)] = [(-1, YAMLOutline(key: "", value: nil, children: []))]
        var blockScalarIndent: Int?
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let indent = rawLine.prefix { $0 == " " }.count
            let content = rawLine.dropFirst(indent)
            if content.isEmpty || content.hasPrefix("#") { continue }
            if let scalarIndent = blockScalarIndent {
                if indent > scalarIndent { continue }
                blockScalarIndent = nil
            }
            let node: YAMLOutline
            if content == "-" || content.hasPrefix("- ") {
                node = YAMLOutline(key: "-", value: String(content.dropFirst(2)), children: [])
            } else {
                guard let colon = Self.mappingColon(in: content) else {
                    throw YAMLOutlineError(line: number + 1, text: String(rawLine))
                }
                let key = Self.unquoted(content[..<colon].trimmingCharacters(in: .whitespaces))
                let value = content[content.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                node = YAMLOutline(key: key, value: value.isEmpty ? nil : Self.unquoted(value), children: [])
                if ["|", "|-", ">", ">-"].contains(value) { blockScalarIndent = indent }
            }
            while let top = stack.last, top.indent >= indent { Self.pop(&stack) }
            stack.append((indent, node))
        }
        while stack.count > 1 { Self.pop(&stack) }
        self = stack[0].node
    }

    private init(key: String, value: String?, children: [YAMLOutline]) {
        self.key = key
        self.value = value
        self.children = children
    }

    /// The child named `key`.
    subscript(key: String) -> YAMLOutline? {
        children.first { $0.key == key }
    }

    /// The node at a slash-separated path of keys (as in `#/components/responses/X`).
    func node(at path: String) -> YAMLOutline? {
        path.split(separator: "/").reduce(Optional(self)) { $0?[String($1)] }
    }

    /// Every `$ref` value in the document.
    var references: [String] {
        (key == "$ref" ? [value ?? ""] : []) + children.flatMap(\.references)
            + (key == "-" && value?.hasPrefix("$ref: ") == true ? [Self.unquoted(String(value!.dropFirst(6)))] : [])
    }

    var description: String { render(depth: 0) }

    private func render(depth: Int) -> String {
        String(repeating: "  ", count: depth) + key + (value.map { ": \($0)" } ?? "") + "\n"
            + children.map { $0.render(depth: depth + 1) }.joined()
    }

    private static func pop(_ stack: inout [(indent: Int, node: YAMLOutline)]) {
        let finished = stack.removeLast().node
        stack[stack.count - 1].node.children.append(finished)
    }

    /// The colon that ends a mapping key: followed by a space or the end of the line,
    /// outside quotes.
    private static func mappingColon(in text: Substring) -> Substring.Index? {
        var quote: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == ":" {
                let next = text.index(after: index)
                if next == text.endIndex || text[next] == " " { return index }
            }
            index = text.index(after: index)
        }
        return nil
    }

    private static func unquoted(_ text: String) -> String {
        if text.count >= 2, let first = text.first, first == text.last, first == "'" || first == "\"" {
            return String(text.dropFirst().dropLast())
        }
        return text
    }
}

struct YAMLOutlineError: Error, CustomStringConvertible {
    let line: Int
    let text: String
    var description: String { "line \(line) is not a mapping or sequence entry: \(text)" }
}
