/// What a number's code key holds (in Lua read by the part `code-split.lua` and made by
/// `code-make.lua`, in every script that touches a code): the code's identity (16
/// characters), its expiry (12 hex digits of ms since 1970, Redis's clock), its state
/// (`00`-`99`: wrong checks so far; `uu` used, `vv` voided, `xx` locked), its digest
/// (`CodeSealer`), the code secret's identifier, then the sealed code (2 hex digits a
/// digit). No space, so it rides in a reserve answer's nonce field after a `#`
/// (`ReserveAnswer`). `CodeRecordLayoutTests` holds the Lua parts to this type.
struct CodeRecord: Equatable {
    let identity: Substring
    let expiresAtMilliseconds: Int64
    let state: Substring
    let digest: Substring
    let keyID: Substring
    let sealed: Substring

    static let headLength = 16 + 12 + 2 + CodeSealer.digestLength + CodeSealer.keyIDLength

    init?(text: Substring) {
        guard text.utf8.count >= Self.headLength + 8, !text.utf8.contains(UInt8(ascii: " ")) else { return nil }
        var rest = text
        func next(_ length: Int) -> Substring {
            defer { rest = rest.dropFirst(length) }
            return rest.prefix(length)
        }
        identity = next(16)
        guard let expiry = Int64(next(12), radix: 16) else { return nil }
        expiresAtMilliseconds = expiry
        state = next(2)
        digest = next(CodeSealer.digestLength)
        keyID = next(CodeSealer.keyIDLength)
        sealed = rest
    }

    /// A new code's record, from the argument a send's script takes (`IssuedCodeRule.argument`:
    /// identity, digest, seal) and its expiry: what `code-issue.lua` makes of the same.
    static func text(argument: String, expiresAtMilliseconds: Int64) -> String {
        let hex = String(expiresAtMilliseconds, radix: 16)
        return argument.prefix(16) + String(repeating: "0", count: max(0, 12 - hex.utf8.count)) + hex + "00" + argument.dropFirst(16)
    }

    /// Wrong checks so far, or nil when the code is used, voided or locked.
    var wrongChecks: Int? { Int(state) }
}
