import Testing
@testable import ResendGateServer

@Suite("JSONFields: strict strings, with and without escapes")
struct JSONFieldsTests {
    private func phone(_ body: String) throws -> JSONFields.Value? {
        try JSONFields(parsing: Array(body.utf8)).value("phone")
    }

    @Test func stringsWithoutEscapesAreTheirBytes() throws {
        #expect(try phone(#"{"phone":"+8613800138000"}"#) == .string("+8613800138000"))
        #expect(try phone(#"{"phone":""}"#) == .string(""))
        #expect(try phone(#"{"phone":"+86 138 é 中"}"#) == .string("+86 138 é 中"))
    }

    @Test func escapesAnywhereInTheString() throws {
        #expect(try phone(#"{"phone":"a\"b\\c\/d\ne"}"#) == .string("a\"b\\c/d\ne"))
        #expect(try phone(#"{"phone":"\u00e9x"}"#) == .string("éx"))
        #expect(try phone(#"{"phone":"+86\ud83d\ude00"}"#) == .string("+86😀"))
        #expect(try phone(#"{"ph\u006fne":"1"}"#) == .string("1"))
    }

    @Test(arguments: [
        Array(#"{"phone":"+86"#.utf8),                       // unterminated
        Array(#"{"phone":"+86\q"}"#.utf8),                   // unknown escape
        Array("{\"phone\":\"+86\n1\"}".utf8),                // raw control character
        [0x7B, 0x22, 0x70, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D],  // {"p":"<bad UTF-8>"}
        Array(#"{"phone":"\ud800"}"#.utf8),                  // lone surrogate
    ])
    func malformedStringsAreRefused(body: [UInt8]) {
        #expect(throws: APIError.self) { try JSONFields(parsing: body) }
    }
}
