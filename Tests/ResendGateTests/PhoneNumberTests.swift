import CPhoneNumber
import Foundation
import Testing
@testable import PhoneNumbers
@testable import ResendGate

@Suite("Phone numbers")
struct PhoneNumberTests {
    /// Every spelling that docs/API.md lists, with CN as the default region.
    static let spellings = [
        "+86 138 0013 8000",
        "+86-138-0013-8000",
        "008613800138000",
        "13800138000",
        "tel:+86-138-0013-8000",
        "＋８６ １３８ ００１３ ８０００",
        "+86 (138) 0013-8000",
        "  +8613800138000  ",
    ]

    @Test("every spelling of one number gives one canonical E.164", arguments: spellings)
    func everySpellingCanonicalisesToOneNumber(spelling: String) throws {
        let number = try PhoneNumber(parsing: spelling, defaultRegion: "CN")
        #expect(number.e164 == "+8613800138000")
        #expect(number.region == "CN")
        #expect(number.countryCode == 86)
        #expect(number.type == .mobile)
    }

    @Test func numberWithCountryCodeNeedsNoRegion() throws {
        let number = try PhoneNumber(parsing: "+44 7400 123456")
        #expect(number.e164 == "+447400123456")
        #expect(number.region == "GB")
        #expect(number.type == .mobile)
    }

    @Test func reportsNumberTypes() throws {
        #expect(try PhoneNumber(parsing: "+44 20 7946 0000").type == .fixedLine)
        #expect(try PhoneNumber(parsing: "+1 201 555 0123").type == .fixedLineOrMobile)
        #expect(try PhoneNumber(parsing: "+44 909 879 0000").type == .premiumRate)
        #expect(try PhoneNumber(parsing: "+1 800 253 0000").type == .tollFree)
    }

    static let invalid: [(String, String?, PhoneNumberError)] = [
        ("", "CN", .empty),
        ("   ", "CN", .empty),
        ("hello", "CN", .notANumber),
        ("+", nil, .notANumber),
        ("1", "CN", .notANumber),
        ("+86 138", nil, .tooShort),
        ("+86 1380013800012345678", nil, .tooLong),
        ("+86 100 0000 0000", nil, .invalidForRegion),
        ("+999 1234 5678", nil, .invalidCountryCode),
        ("13800138000", nil, .missingRegion),
        ("13800138000", "XX", .invalidDefaultRegion("XX")),
        // E.164 input takes the fast path, which still refuses an unknown default region.
        ("+8613800138000", "XX", .invalidDefaultRegion("XX")),
        ("+8613800138000\u{0}", nil, .notANumber),
        ("+8613800138000\r\nX-Evil: 1", nil, .notANumber),
        (String(repeating: "1", count: 65), "CN", .tooManyCharacters),
    ]

    @Test("invalid input is rejected with the reason", arguments: invalid)
    func rejectsInvalidInput(input: String, region: String?, expected: PhoneNumberError) {
        #expect(throws: expected) { try PhoneNumber(parsing: input, defaultRegion: region) }
    }

    @Test func cacheReturnsTheSameAnswerAndStaysBounded() throws {
        let parser = PhoneNumberParser(capacity: 4)
        for suffix in 0..<50 {
            let number = try parser.parse("+86 138 0013 80\(String(format: "%02d", suffix))", defaultRegion: nil)
            #expect(number.e164 == "+86138001380\(String(format: "%02d", suffix))")
        }
        // Hits, after eviction and after promotion, answer exactly as a fresh parse.
        #expect(try parser.parse("+86 138 0013 8049", defaultRegion: nil).e164 == "+8613800138049")
        #expect(try parser.parse("+86 138 0013 8000", defaultRegion: nil).e164 == "+8613800138000")
        #expect(throws: PhoneNumberError.tooShort) { try parser.parse("+86 138", defaultRegion: nil) }
        #expect(throws: PhoneNumberError.tooShort) { try parser.parse("+86 138", defaultRegion: nil) }
        #expect(parser.cachedCount <= 4)
    }

    /// The shim decides E.164 input without libphonenumber's free-text parse; it must
    /// decide exactly as that parse does, or two spellings of one number could get two keys.
    @Test func theE164FastPathAgreesWithTheFullParse() {
        let (mismatches, decided, first) = PhoneNumberParser.fastPathSelfCheck(samples: 300_000, seed: 20_261_130)
        #expect(mismatches == 0, "first difference: \(first)")
        // The comparison means something only if the fast path decides many numbers.
        #expect(decided > 30_000, "the fast path decided only \(decided) of 300 000")
    }

    /// Issue 23, finding 1: `+014155552671` was a second key for `+14155552671`. Inputs
    /// spelled around every calling code (zeros before the code, IDD and trunk prefixes, a
    /// digit more or fewer, separators, full-width and Arabic-Indic digits, national
    /// format) get the same answer from the gate's parse as from libphonenumber's alone,
    /// and every spelling of a number its one key.
    @Test func everySpellingAroundEveryCallingCodeAgreesWithLibphonenumber() {
        let (mismatches, compared, first) = PhoneNumberParser.differentialCheck(seed: 20_261_204)
        #expect(mismatches == 0, "\(mismatches) of \(compared); first: \(first)")
        #expect(compared > 10_000, "only \(compared) inputs were compared")
    }

    @Test func aZeroBeforeTheCallingCodeIsNoNumber() throws {
        for text in ["+014155552671", "+0014155552671", "+08613800138000", "+0447911123456"] {
            #expect(throws: PhoneNumberError.invalidCountryCode, "\(text)") { try PhoneNumberParser(capacity: 2).parse(text, defaultRegion: nil) }
            #expect(throws: PhoneNumberError.invalidCountryCode, "\(text)") { try PhoneNumberParser(capacity: 2).parse(text, defaultRegion: "US") }
        }
        #expect(try PhoneNumber(parsing: "+14155552671").e164 == "+14155552671")
    }

    /// libphonenumber strips Mexico's old mobile 1 once per parse; the gate parses until
    /// the number no longer changes, so every spelling ends on the same key.
    @Test func canonicalNumbersAreFixedPoints() throws {
        let spellings = ["+52 1 1 444 864 1375", "+52 1 444 864 1375", "+52 444 864 1375", "+524448641375"]
        let keys = try Set(spellings.map { try PhoneNumber(parsing: $0).e164 })
        #expect(keys == ["+524448641375"])
        for spelling in spellings {
            let number = try PhoneNumber(parsing: spelling)
            #expect(try PhoneNumber(parsing: number.e164).e164 == number.e164)
        }
    }
}

/// `PhoneNumberType(cValue:)` indexes the cases by the shim's `rg_phone_type`: each of the
/// shim's values is the case of the same name, and a value past them is `unknown`.
@Suite struct PhoneNumberTypeFromShimTests {
    @Test func eachShimTypeIsTheCaseOfItsName() {
        let shim: [(rg_phone_type, PhoneNumberType)] = [
            (RG_PHONE_TYPE_FIXED_LINE, .fixedLine), (RG_PHONE_TYPE_MOBILE, .mobile),
            (RG_PHONE_TYPE_FIXED_LINE_OR_MOBILE, .fixedLineOrMobile), (RG_PHONE_TYPE_TOLL_FREE, .tollFree),
            (RG_PHONE_TYPE_PREMIUM_RATE, .premiumRate), (RG_PHONE_TYPE_SHARED_COST, .sharedCost),
            (RG_PHONE_TYPE_VOIP, .voip), (RG_PHONE_TYPE_PERSONAL_NUMBER, .personalNumber), (RG_PHONE_TYPE_PAGER, .pager),
            (RG_PHONE_TYPE_UAN, .uan), (RG_PHONE_TYPE_VOICEMAIL, .voicemail), (RG_PHONE_TYPE_UNKNOWN, .unknown),
        ]
        for (value, type) in shim { #expect(PhoneNumberType(cValue: Int32(value.rawValue)) == type, "\(value)") }
        #expect(shim.count == PhoneNumberType.allCases.count)
        #expect(PhoneNumberType(cValue: 12) == .unknown && PhoneNumberType(cValue: -1) == .unknown)
    }
}
