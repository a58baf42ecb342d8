import GateRuntime
import RedisClient
import ResendGate
import Testing

/// `--test-numbers`: E.164 numbers, and ranges whose last N digits are free.
@Suite("Test numbers: parsing and matching")
struct TestNumbersTests {
    @Test func numbersAndRangesMatchExactlyTheirNumbers() throws {
        let numbers = try TestNumbers(parsing: " +15005550006, +447400123000/3 ,")
        #expect(numbers.contains("+15005550006"))
        #expect(!numbers.contains("+15005550007"))
        #expect(!numbers.contains("+150055500061"), "a longer number is not the same one")
        #expect(numbers.contains("+447400123000") && numbers.contains("+447400123999"))
        #expect(!numbers.contains("+447400124000") && !numbers.contains("+44740012345"))
        #expect(TestNumbers.none.isEmpty && !TestNumbers.none.contains("+15005550006"))
    }

    @Test(arguments: [
        "15005550006", "+1500555000x", "+123456", "+12345678901234567", "+15005550000/7", "+15005550000/-1",
        "+15005550000/", "+15005550000/4/2", "+1 500 555 0006", "+1234/1",
    ])
    func anythingElseIsRefusedNamingTheSetting(spec: String) {
        #expect(throws: ConfigurationError.self) { try TestNumbers(parsing: spec) }
        let error = try? #require(throws: ConfigurationError.self) { try TestNumbers(parsing: spec) }
        #expect(error?.field == "test-numbers")
    }

    @Test func entriesAreBounded() {
        let many = (0...TestNumbers.maximumEntries).map { "+1500555\(String(format: "%04d", $0))" }.joined(separator: ",")
        #expect(throws: ConfigurationError.self) { try TestNumbers(parsing: many) }
    }
}
