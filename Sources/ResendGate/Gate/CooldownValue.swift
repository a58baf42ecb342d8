import GateRuntime
import RedisClient

/// What a plain cooldown's key holds (the default policy: one cooldown, nothing counted):
/// its nonce, then the cooldown's deadline in 12 hex digits of milliseconds since 1970 by
/// the clock of the gate that allowed the send; 28 characters, which Redis keeps in the
/// same 48-byte allocation as the nonce alone. A refused `SET … NX GET` returns it, so a
/// refusal's wait needs no second command (`Cooldowns.swift`).
///
/// Keys the reserve script writes hold the same, by Redis's clock, and then, for a send
/// with an idempotency record, a space and the record's name (so a refund can void it);
/// other scripts' keys may hold the nonce alone. Every script compares, publishes and
/// returns only the first 16 characters, so tokens, releases and streams see nonces only.
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

    /// A key's value, or nil for one the gate did not write (another program's, or an
    /// older version's 22-character token).
    init?(text: Substring) {
        guard let nonce = CooldownNonce(text: text.prefix(CooldownNonce.textLength)) else { return nil }
        // After the nonce: nothing, or 12 hex digits; then maybe a space and a record's name.
        var digits = text.dropFirst(CooldownNonce.textLength)
        if let space = digits.firstIndex(of: " ") { digits = digits[..<space] }
        guard digits.isEmpty || digits.utf8.count == Self.deadlineDigits else { return nil }
        self.nonce = nonce
        if digits.isEmpty {
            deadlineMilliseconds = nil
        } else {
            guard digits.utf8.allSatisfy({ $0.lowercaseHexValue != nil }), let deadline = Int64(digits, radix: 16)
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

    /// Writes the key's value as one argument into the connection's reused buffer: the
    /// send path builds no String for it.
    func append(to args: inout RedisArguments) {
        args.appendPart(nonce.text)
        if let deadlineMilliseconds { args.appendHexPart(UInt64(deadlineMilliseconds), digits: Self.deadlineDigits) }
        args.endArgument()
    }
}
