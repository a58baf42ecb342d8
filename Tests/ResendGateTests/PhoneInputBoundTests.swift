@testable import ResendGate
import Testing

/// What a client cannot make the parser keep: oversized text, text around a number,
/// and more cache than its entry and byte bounds.
@Suite("Phone input bounds")
struct PhoneInputBoundTests {
    @Test func textOverTheLengthLimitIsRefusedBeforeTheCache() throws {
        let parser = PhoneNumberParser(capacity: 1_000)
        for index in 0..<100 {
            let text = "+86 138 0013 8000 " + String(repeating: " ", count: 16 * 1024) + String(index)
            #expect(throws: PhoneNumberError.tooManyCharacters) { try parser.parse(text, defaultRegion: "CN") }
        }
        let justOver = String(repeating: "1", count: PhoneNumberParser.maximumInputBytes + 1)
        #expect(throws: PhoneNumberError.tooManyCharacters) { try parser.parse(justOver, defaultRegion: "CN") }
        #expect(parser.cachedCount == 0)
        #expect(parser.cachedBytes == 0)
        // Text at the limit still goes through the cache: the count above means something.
        let atLimit = "+86 138 0013 8000" + String(repeating: " ", count: PhoneNumberParser.maximumInputBytes - 17)
        #expect(try parser.parse(atLimit, defaultRegion: nil).e164 == "+8613800138000")
        #expect(parser.cachedCount == 1)
    }

    @Test func theParseCacheIsBoundedInBytes() throws {
        let budget = 64 * 1024
        let parser = PhoneNumberParser(capacity: 1_000_000, maximumBytes: budget)
        var most = 0
        for index in 0..<5_000 {
            // Distinct texts of about 60 bytes, each a full parse (spaces skip the E.164 path).
            let text = "+86 138 " + String(index) + String(repeating: " ", count: 40) + "0"
            _ = try? parser.parse(text, defaultRegion: nil)
            most = max(most, parser.cachedBytes)
        }
        #expect(most <= budget)
        #expect(parser.cachedCount > 100, "the cache should still hold what fits")
        #expect(parser.cachedCount < 5_000 / 10)
    }

    @Test func theParseCacheIsBoundedInEntries() throws {
        let parser = PhoneNumberParser(capacity: 10, maximumBytes: 1 << 30)
        for index in 0..<200 { _ = try? parser.parse("+86 138 0013 \(8000 + index)", defaultRegion: nil) }
        #expect(parser.cachedCount <= 10)
    }

    @Test func theKeyHashCacheIsBoundedInBytes() {
        let budget = 32 * 1024
        let hasher = NumberKeyHasher(secret: "a-secret-of-16-chars", capacity: 1_000_000, maximumBytes: budget)
        var most = 0
        for index in 0..<2_000 {
            let e164 = "+86138" + String(10_000_000 + index)
            let key = hasher.keyText(for: e164)
            #expect(key == NumberKeyHasher.hmacSHA256Hex(key: Array("a-secret-of-16-chars".utf8), message: Array(e164.utf8)))
            most = max(most, hasher.cached.bytes)
        }
        #expect(most <= budget)
        #expect(hasher.cached.count > 50)
        #expect(hasher.keyText(for: "+8613810001999") == hasher.keyText(for: "+8613810001999"))
    }

    @Test func theCacheKeepsNeitherMoreEntriesNorMoreBytesThanItsBounds() {
        var cache = GenerationalCache<Int, Int>(maximumEntries: 8, maximumBytes: 10_000)
        var most = (count: 0, bytes: 0)
        for key in 0..<100 {
            cache.insert(key, for: key, bytes: 500)
            most = (max(most.count, cache.count), max(most.bytes, cache.bytes))
        }
        #expect(most.count <= 8)
        #expect(most.bytes <= 10_000)
        // An entry larger than a generation's share is never kept.
        cache.insert(-1, for: -1, bytes: 6_000)
        #expect(cache.value(for: -1) == nil)
        // A hit in the old generation is promoted and outlives the next rotation.
        var promoting = GenerationalCache<Int, Int>(maximumEntries: 4, maximumBytes: 1 << 20)
        promoting.insert(1, for: 1, bytes: 0)
        promoting.insert(2, for: 2, bytes: 0)
        promoting.insert(3, for: 3, bytes: 0)  // 1 and 2 move to the old generation
        #expect(promoting.value(for: 1) == 1)  // promoted next to 3
        promoting.insert(4, for: 4, bytes: 0)  // rotates: 2 is dropped, 1 and 3 are old
        #expect(promoting.value(for: 2) == nil)
        #expect(promoting.value(for: 1) == 1)
        #expect(promoting.value(for: 3) == 3)
    }

    // MARK: - Text around a number

    static let textAround = [
        "Tel.: +447911123456!!!", "+447911123456!!!", "Tel.: +447911123456", "call +44 7911 123456",
        "+44 7911 123456 ext. 12", "+44 7911 123456#12", "+44 7911 123456;ext=12", "+44 7911 123456 x12",
        "tel:+447911123456;phone-context=example.com", "44+7911123456", "++447911123456", "+44 7911 123456\u{0}",
        "<+447911123456>", "+447911123456, +447911123457",
    ]

    @Test("text around a number is refused", arguments: textAround)
    func textAroundANumberIsRefused(_ text: String) {
        #expect(throws: PhoneNumberError.notANumber) { try PhoneNumberParser(capacity: 4).parse(text, defaultRegion: "GB") }
    }

    @Test func aVanitySpellingIsRefused() {
        #expect(throws: PhoneNumberError.notANumber) {
            try PhoneNumberParser(capacity: 4).parse("1-800-FLOWERS", defaultRegion: "US")
        }
    }

    static let spellings = [
        "+447911123456", "+44 7911 123456", "+44-7911-123456", "+44.7911.123456", "+44/7911/123456",
        "+44 (0) 7911 123456", "(+44) 7911 123456", "[+44] 7911 123456", "tel:+44-7911-123456", "TEL:+447911123456",
        "  +44 7911 123456\t", "07911 123456", "0044 7911 123456", "＋４４ ７９１１ １２３４５６", "+٤٤٧٩١١١٢٣٤٥٦",
        "+44\u{00A0}7911\u{2010}123456", "+44－7911－123456",
    ]

    @Test("every spelling of a number without text around it gives one key", arguments: spellings)
    func everySpellingGivesOneKey(_ spelling: String) throws {
        #expect(try PhoneNumberParser(capacity: 4).parse(spelling, defaultRegion: "GB").e164 == "+447911123456")
    }
}
