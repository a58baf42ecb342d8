import CCrypto
import GateRuntime

/// Seals and opens countdown tokens with AES-256-GCM (libcrypto). A token is `nonce (12
/// bytes, the IV) ‖ ciphertext ‖ tag (16 bytes)` in base64url; the plaintext is `version
/// (1 cooldown, 2 code) ‖ purpose length ‖ purpose ‖ form ‖ number`, the number's key text
/// as is (form 0) or, an HMAC under `--key-secret`, its 32 bytes (form 1). The nonce is
/// the value the cooldown's key holds: a token is live exactly while the key holds it.
///
/// The AES key is HMAC-SHA256(secret, "resendgate countdown token v1"): gates sharing a
/// secret open each other's tokens; a new secret makes every outstanding token a 404. IVs
/// are random (96 bits), so rotate the secret long before it seals 2^32 tokens.
/// Confined to one loop: it reuses its two OpenSSL contexts, keyed once.
public final class CountdownTokenCipher {
    private static let tagSize = 16
    private static let versions: [Contents.Kind: UInt8] = [.cooldown: 1, .code: 2]
    private let sealer: OpaquePointer
    private let opener: OpaquePointer

    /// `secret`: any bytes; the deployment's `--token-secret`, or the one kept in Redis.
    public init(secret: [UInt8]) {
        var key = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let label = Array("resendgate countdown token v1".utf8)
        _ = secret.withUnsafeBytes { secretBytes in
            HMAC(EVP_sha256(), secretBytes.baseAddress, Int32(secretBytes.count), label, label.count, &key, &length)
        }
        sealer = EVP_CIPHER_CTX_new()
        opener = EVP_CIPHER_CTX_new()
        EVP_EncryptInit_ex(sealer, EVP_aes_256_gcm(), nil, key, nil)
        EVP_DecryptInit_ex(opener, EVP_aes_256_gcm(), nil, key, nil)
        for index in key.indices { key[index] = 0 }
    }

    deinit {
        EVP_CIPHER_CTX_free(sealer)
        EVP_CIPHER_CTX_free(opener)
    }

    /// What a token names.
    public struct Contents: Equatable {
        public let purpose: Purpose
        /// The number's key text (the E.164 number, or its HMAC in hex).
        public let number: String
        let nonce: CooldownNonce
        /// What the token follows.
        public let kind: Kind

        /// A cooldown (its key holds the nonce), or an issued code (its identity is the nonce).
        public enum Kind: Sendable, Hashable {
            case cooldown, code
        }

        /// The nonce the cooldown's key holds (a plain one's: before its deadline) while live.
        public var cooldownValue: String { nonce.text }
    }

    /// The token of the cooldown of `number` (its key text) for `purpose` whose key holds `nonce`.
    func seal(purpose: Purpose, number: String, nonce: CooldownNonce, kind: Contents.Kind = .cooldown) -> CountdownToken {
        var plain: [UInt8] = [Self.versions[kind] ?? 1, UInt8(purpose.name.utf8.count)]
        plain.append(contentsOf: purpose.name.utf8)
        if number.utf8.count == 64, let packed = CountdownToken.bytes(lowercaseHex: number) {
            plain.append(1)
            plain.append(contentsOf: packed)
        } else {
            plain.append(0)
            plain.append(contentsOf: number.utf8)
        }
        var out = nonce.bytes
        out.append(contentsOf: [UInt8](repeating: 0, count: plain.count + Self.tagSize))
        out.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var written: Int32 = 0
            EVP_EncryptInit_ex(sealer, nil, nil, nil, base)
            EVP_EncryptUpdate(sealer, base + CooldownNonce.byteCount, &written, plain, Int32(plain.count))
            var final: Int32 = 0
            EVP_EncryptFinal_ex(sealer, base + CooldownNonce.byteCount + Int(written), &final)
            EVP_CIPHER_CTX_ctrl(
                sealer, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagSize), base + CooldownNonce.byteCount + plain.count)
        }
        return CountdownToken(uncheckedText: CountdownToken.base64URL(out))
    }

    /// What `token` names; nil when not sealed with this secret, altered, or no token. No Redis.
    public func open(_ token: CountdownToken) -> Contents? {
        guard let sealed = CountdownToken.bytes(base64URL: Substring(token.text)),
              sealed.count >= CooldownNonce.byteCount + 5 + Self.tagSize else { return nil }
        let plainCount = sealed.count - CooldownNonce.byteCount - Self.tagSize
        var plain = [UInt8](repeating: 0, count: plainCount)
        var tag = Array(sealed.suffix(Self.tagSize))
        let authentic = sealed.withUnsafeBufferPointer { input -> Bool in
            let base = input.baseAddress!
            var written: Int32 = 0, final: Int32 = 0
            guard EVP_DecryptInit_ex(opener, nil, nil, nil, base) == 1,
                  EVP_DecryptUpdate(opener, &plain, &written, base + CooldownNonce.byteCount, Int32(plainCount)) == 1,
                  EVP_CIPHER_CTX_ctrl(opener, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagSize), &tag) == 1
            else { return false }
            return plain.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(opener, $0.baseAddress! + Int(written), &final) } == 1
        }
        guard authentic, let kind = Self.versions.first(where: { $0.value == plain[0] })?.key else { return nil }
        let purposeLength = Int(plain[1])
        guard plainCount >= 2 + purposeLength + 2,
              let purpose = try? Purpose(String(decoding: plain[2..<2 + purposeLength], as: UTF8.self)) else { return nil }
        let numberBytes = plain[(3 + purposeLength)...]
        let number: String
        switch plain[2 + purposeLength] {  // the number's form
        case 0: number = String(decoding: numberBytes, as: UTF8.self)
        case 1 where numberBytes.count == 32: number = numberBytes.lowercaseHex
        default: return nil
        }
        let nonce = CooldownNonce(bytes: Array(sealed.prefix(CooldownNonce.byteCount)))
        return Contents(purpose: purpose, number: number, nonce: nonce, kind: kind)
    }
}
