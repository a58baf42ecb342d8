import GateRuntime

/// Makes issued codes, and seals and checks them under the deployment's code secret,
/// which Redis never holds: a dump of Redis alone reveals no live code.
///
/// A code's digest, `HMAC(digest key, purpose ‖ number ‖ code)` cut to 12 bytes, is what
/// `check.lua` compares inside Redis: a check is one atomic step that sees only HMACs a
/// guesser cannot make. Its seal, the digits XOR `HMAC(seal key, purpose ‖ number ‖
/// identity)`, lets a gate send the same code again or replay it; the identity is a fresh
/// nonce, so no two codes share a pad, and a seal altered or moved to another number opens
/// to a code whose digest does not match. Confined to its worker's loop.
final class CodeSealer {
    /// Characters of a digest: 12 bytes in base64url.
    static let digestLength = 16
    /// Characters of the secret's identifier a record carries: 3 bytes in base64url.
    static let keyIDLength = 4
    private let digestKey: [UInt8]
    private let sealKey: [UInt8]
    /// Names the secret (no way back to it) in each record, so a code sealed under a secret
    /// since changed is no live code, inside Redis too.
    let keyID: String

    init(secret: String) {
        let derive = { (label: String) in NumberKeyHasher.hmacSHA256(key: Array(secret.utf8), message: Array(label.utf8)) }
        digestKey = derive("resendgate code digest v1")
        sealKey = derive("resendgate code seal v1")
        keyID = CountdownToken.base64URL(Array(derive("resendgate code key id v1").prefix(3)))
    }

    /// A fresh code of `length` digits from the system's CSPRNG, uniform: draws at or above
    /// the largest multiple of 10^length are drawn again, so no code is likelier.
    static func freshCode(length: Int) -> String {
        precondition(IssuedCodes.lengths.contains(length))
        var generator = SystemRandomNumberGenerator()
        let bound = (0..<length).reduce(UInt64(1)) { value, _ in value * 10 }
        let limit = UInt64.max - UInt64.max % bound
        var draw = generator.next() as UInt64
        while draw >= limit { draw = generator.next() }
        let digits = String(draw % bound)
        return String(repeating: "0", count: length - digits.utf8.count) + digits
    }

    /// What a check of `code` for `number` (its key text) and `purpose` compares.
    func digest(code: String, purpose: Purpose, number: String) -> String {
        CountdownToken.base64URL(Array(Self.mac(digestKey, purpose, number, code).prefix(12)))
    }

    /// The digest, the secret's identifier, then the seal: a new code's script argument
    /// after its identity.
    func sealedCode(_ code: String, identity: CooldownNonce, purpose: Purpose, number: String) -> String {
        let pad = Self.mac(sealKey, purpose, number, identity.text)
        let sealed = zip(code.utf8, pad).map { $0 ^ $1 }
        return digest(code: code, purpose: purpose, number: number) + keyID + sealed.lowercaseHex
    }

    /// The code a record holds, or nil when its seal does not open to the code its digest names.
    func open(_ record: CodeRecord, purpose: Purpose, number: String) -> String? {
        guard record.keyID == keyID, IssuedCodes.lengths.contains(record.sealed.utf8.count / 2),
              let sealed = CountdownToken.bytes(lowercaseHex: record.sealed) else { return nil }
        let pad = Self.mac(sealKey, purpose, number, String(record.identity))
        let code = String(decoding: zip(sealed, pad).map { $0 ^ $1 }, as: UTF8.self)
        guard IssuedCodes.isWellFormed(Substring(code)),
              constantTimeEquals(digest(code: code, purpose: purpose, number: number).utf8, record.digest.utf8) else { return nil }
        return code
    }

    /// The code an answer's record names, or nil when it cannot be opened. It was resent
    /// when the record's identity is not the one `offered` (nil for a replay: never resent).
    func issued(_ text: Substring, purpose: Purpose, number: String, offered: String?, cipher: CountdownTokenCipher) -> IssuedCode? {
        guard let record = CodeRecord(text: text), let code = open(record, purpose: purpose, number: number) else { return nil }
        return IssuedCode(
            code: code, expiresAtMilliseconds: record.expiresAtMilliseconds,
            resent: offered.map { !$0.hasPrefix(record.identity) } ?? false,
            countdownToken: CooldownNonce(text: record.identity).map { cipher.seal(purpose: purpose, number: number, nonce: $0, kind: .code) })
    }

    /// HMAC-SHA256 under `key` of `purpose ‖ 0 ‖ number ‖ 0 ‖ last`.
    private static func mac(_ key: [UInt8], _ purpose: Purpose, _ number: String, _ last: String) -> [UInt8] {
        NumberKeyHasher.hmacSHA256(key: key, message: Array(purpose.name.utf8) + [0] + Array(number.utf8) + [0] + Array(last.utf8))
    }
}
