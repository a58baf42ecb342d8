import CPhoneNumber
import Synchronization

/// Parses phone numbers through libphonenumber, with a bounded cache of recent
/// results: a parse costs libphonenumber 20-40 µs, a cache hit well under 1 µs.
///
/// Text longer than `maximumInputBytes` is refused before the cache and libphonenumber
/// see it, so a client cannot fill the cache with large keys; the cache itself is
/// bounded in entries and in bytes (`GenerationalCache`).
public final class PhoneNumberParser: Sendable {
    /// Inputs longer than this are refused before the cache or libphonenumber sees them.
    public static let maximumInputBytes = 64
    /// One shared parser, used by `PhoneNumber(parsing:defaultRegion:)`.
    public static let shared = PhoneNumberParser(capacity: 65_536, maximumBytes: 16 << 20)

    private struct CacheKey: Hashable {
        let text: String
        let region: String?
    }

    private let cache: Mutex<GenerationalCache<CacheKey, Result<PhoneNumber, PhoneNumberError>>>

    /// A parser whose cache keeps at most `capacity` recent inputs and about
    /// `maximumBytes` bytes of them.
    public init(capacity: Int, maximumBytes: Int = 4 << 20) {
        cache = Mutex(GenerationalCache(maximumEntries: capacity, maximumBytes: maximumBytes))
    }

    /// Parses `text`, using `defaultRegion` for numbers without a country code.
    public func parse(_ text: String, defaultRegion: String?) throws(PhoneNumberError) -> PhoneNumber {
        if let region = defaultRegion, !PhoneNumber.isKnownRegion(region) {
            throw .invalidDefaultRegion(region)
        }
        // Checked first: text this long is no number, and must not become a cache key.
        guard text.utf8.count <= Self.maximumInputBytes else { throw .tooManyCharacters }
        // E.164 input ("+8613800138000") is decided in about 1 us without the cache,
        // which would cost about as much and hold numbers that will not repeat.
        if let number = Self.parseE164(text) { return number }
        let key = CacheKey(text: text, region: defaultRegion)
        if let cached = cache.withLock({ $0.value(for: key) }) { return try cached.get() }
        let result = Self.parseUncached(text, defaultRegion: defaultRegion)
        let bytes = Self.bytes(of: key, result)
        cache.withLock { $0.insert(result, for: key, bytes: bytes) }
        return try result.get()
    }

    /// What an entry holds on the heap: the text, the region, and a number's strings.
    private static func bytes(of key: CacheKey, _ result: Result<PhoneNumber, PhoneNumberError>) -> Int {
        var bytes = key.text.estimatedHeapBytes + (key.region?.utf8.count ?? 0)
        if case .success(let number) = result {
            bytes += number.e164.estimatedHeapBytes + number.region.utf8.count
        }
        return bytes
    }

    /// Compares the shim's E.164 fast path with libphonenumber's full parse on
    /// `samples` numbers; returns the number of differences and the first one.
    static func fastPathSelfCheck(samples: Int, seed: UInt32) -> (mismatches: Int, decided: Int, first: String) {
        var buffer = [CChar](repeating: 0, count: 512)
        var decided = 0
        let mismatches = rg_phone_self_check(samples, seed, &decided, &buffer, buffer.count)
        return (mismatches, decided, String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Spells an example number of every calling code in many ways and compares this
    /// parser's answer (fast path, then libphonenumber) with libphonenumber's alone, and
    /// every spelling's key with the number's (`rg_phone_differential_check`).
    static func differentialCheck(seed: UInt32) -> (mismatches: Int, compared: Int, first: String) {
        var buffer = [CChar](repeating: 0, count: 512)
        var compared = 0
        let mismatches = rg_phone_differential_check(seed, &compared, &buffer, buffer.count)
        return (mismatches, compared, String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// How many results the cache holds now (for tests and metrics).
    public var cachedCount: Int {
        cache.withLock { $0.count }
    }

    /// The estimated bytes the cache holds now (for tests and metrics).
    public var cachedBytes: Int {
        cache.withLock { $0.bytes }
    }

    /// The shim's E.164 fast path alone: nil when `text` needs the full parse.
    private static func parseE164(_ text: String) -> PhoneNumber? {
        var text = text
        return text.withUTF8 { bytes -> PhoneNumber? in
            guard bytes.count >= 9, bytes.count <= 16, bytes[0] == UInt8(ascii: "+") else { return nil }
            var out = rg_phone_result()
            let decided = bytes.withMemoryRebound(to: CChar.self) { rg_phone_parse_e164($0.baseAddress, $0.count, &out) }
            return decided == 1 ? PhoneNumber(out) : nil
        }
    }

    private static func parseUncached(_ text: String, defaultRegion: String?) -> Result<PhoneNumber, PhoneNumberError> {
        let utf8 = Array(text.utf8)
        if utf8.count > maximumInputBytes { return .failure(.tooManyCharacters) }
        // Control characters (NUL, CR, LF and the like) are never part of a number, and
        // text around a number ("Tel.: +44 7911 123456!!!", an extension) is refused.
        guard PhoneNumberSpelling.isNumberOnly(text) else { return .failure(.notANumber) }

        var out = rg_phone_result()
        let status = utf8.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let region = defaultRegion {
                    region.withCString { rg_phone_parse(chars.baseAddress, chars.count, $0, &out) }
                } else {
                    rg_phone_parse(chars.baseAddress, chars.count, nil, &out)
                }
            }
        }
        switch status {
        case RG_PHONE_OK: return .success(PhoneNumber(out))
        case RG_PHONE_EMPTY: return .failure(.empty)
        case RG_PHONE_TOO_SHORT: return .failure(.tooShort)
        case RG_PHONE_TOO_LONG: return .failure(.tooLong)
        case RG_PHONE_INVALID_FOR_REGION: return .failure(.invalidForRegion)
        case RG_PHONE_INVALID_COUNTRY_CODE: return .failure(.invalidCountryCode)
        case RG_PHONE_MISSING_REGION: return .failure(.missingRegion)
        default: return .failure(.notANumber)
        }
    }
}

extension PhoneNumber {
    /// The shim's successful result.
    fileprivate init(_ out: rg_phone_result) {
        let e164 = withUnsafeBytes(of: out.e164) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let region = withUnsafeBytes(of: out.region) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        self.init(e164: e164, region: region, type: PhoneNumberType(cValue: out.type), countryCode: Int(out.country_code))
    }
}
