import GateRuntime
import RedisClient

/// What a cooldown key holds: its nonce, then the deadline in 12 hex digits of ms since 1970
/// (28 characters: Redis keeps them in the same 48-byte allocation as the nonce alone). A
/// refused plain `SET … NX GET` returns it, so its wait needs no second command
/// (`Cooldowns.swift`). The reserve script's keys may add a space and the send's idempotency
/// record (for a refund to void); other scripts' may hold the nonce alone. Scripts compare,
/// publish and return only the nonce, so tokens, releases and streams see nonces only.
struct CooldownValue {
    static let deadlineDigits = 12

    let nonce: CooldownNonce
    /// Nil for a value that holds none.
    let deadlineMilliseconds: Int64?

    init(nonce: CooldownNonce, deadlineMilliseconds: Int64) {
        precondition((0..<(1 << 48)).contains(deadlineMilliseconds), "a deadline fits 12 hex digits")
        self.nonce = nonce
        self.deadlineMilliseconds = deadlineMilliseconds
    }

    /// A key's value; nil for another program's or an older version's 22-character token.
    init?(text: Substring) {
        guard let nonce = CooldownNonce(text: text.prefix(CooldownNonce.textLength)) else { return nil }
        // After the nonce: nothing, or 12 hex digits; then maybe a space and a record's name.
        var digits = text.dropFirst(CooldownNonce.textLength)
        if let space = digits.firstIndex(of: " ") { digits = digits[..<space] }
        self.nonce = nonce
        if digits.isEmpty {
            deadlineMilliseconds = nil
        } else {
            guard digits.utf8.count == Self.deadlineDigits, digits.utf8.allSatisfy({ $0.lowercaseHexValue != nil }),
                  let deadline = Int64(digits, radix: 16)
            else { return nil }
            deadlineMilliseconds = deadline
        }
    }

    /// The text the key holds.
    var text: String {
        var args = RedisArguments()
        append(to: &args)
        return String(decoding: args.bytes, as: UTF8.self)
    }

    /// Writes the key's value as one argument, building no String (the send path).
    func append(to args: inout RedisArguments) {
        args.appendPart(nonce.text)
        if let deadlineMilliseconds { args.appendHexPart(UInt64(deadlineMilliseconds), digits: Self.deadlineDigits) }
        args.endArgument()
    }
}
