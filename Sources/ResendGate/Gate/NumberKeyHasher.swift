import CCrypto
import GateRuntime

/// A canonical number's text in its Redis keys: the number, or, with a secret, its
/// HMAC-SHA256 in hex, so a Redis dump lists no phone number. Confined to one loop; its cache
/// is bounded in entries and bytes (any valid number a client names becomes an entry).
public final class NumberKeyHasher {
    private let secret: [UInt8]?
    private var cache: GenerationalCache<String, String>

    /// `secret` nil keeps numbers readable in keys; the cache keeps `capacity` results, `maximumBytes`.
    public init(secret: String?, capacity: Int = 16_384, maximumBytes: Int = 4 << 20) {
        self.secret = secret.map { Array($0.utf8) }
        cache = GenerationalCache(maximumEntries: capacity, maximumBytes: maximumBytes)
    }

    /// The key text for `e164`.
    public func keyText(for e164: String) -> String {
        guard let secret else { return e164 }
        if let hit = cache.value(for: e164) { return hit }
        let text = Self.hmacSHA256Hex(key: secret, message: Array(e164.utf8))
        cache.insert(text, for: e164, bytes: e164.estimatedHeapBytes + text.estimatedHeapBytes)
        return text
    }

    /// The key text for a client address (`ClientAddress.text`): the address, or its HMAC
    /// (apart from any number's: the text hashed starts with `ip `).
    public func keyText(forAddress address: String) -> String {
        guard secret != nil else { return address }
        return keyText(for: "ip " + address)
    }

    /// How many results the cache holds, and their estimated bytes (for tests).
    public var cached: (count: Int, bytes: Int) { (cache.count, cache.bytes) }

    static func hmacSHA256Hex(key: [UInt8], message: [UInt8]) -> String {
        hmacSHA256(key: key, message: message).lowercaseHex
    }

    /// HMAC-SHA256 of `message` under `key` (OpenSSL's one-shot `HMAC`): 32 bytes.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count),
                     messageBytes.bindMemory(to: UInt8.self).baseAddress, messageBytes.count, &digest, &length)
            }
        }
        return Array(digest.prefix(Int(length)))
    }
}
