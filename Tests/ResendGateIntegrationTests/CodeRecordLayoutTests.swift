import Foundation
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 36, item 4: an issued code's record is read in Lua by one part (`code-split.lua`,
/// in every script that reads a code) and made by one (`code-make.lua`), and in Swift by
/// `CodeRecord` (the plain send writes it with `CodeRecord.text`). On generated records in
/// every state, the two read the same fields, make the same text, and a record made of
/// what was read is the record.
@Suite("An issued code's record: Swift and the scripts agree")
struct CodeRecordLayoutTests {
    @Test func swiftAndLuaReadAndMakeTheSameRecords() async throws {
        try await withRedis { redis in
            let client = try redis.client()
            var random = SystemRandomNumberGenerator()
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            func text(_ count: Int) -> String { String((0..<count).map { _ in alphabet.randomElement(using: &random)! }) }
            let states = ["00", "01", "09", "42", "99", "uu", "vv", "xx"]
            for round in 0..<64 {
                let identity = text(16)
                let tail = text(CodeSealer.digestLength) + text(CodeSealer.keyIDLength)
                    + String((0..<(2 * Int.random(in: 4...10, using: &random))).map { _ in "0123456789abcdef".randomElement(using: &random)! })
                let expiry: Int64 = [0, 1, (1 << 48) - 1, Int64.random(in: 0..<(1 << 48), using: &random)][round % 4]
                let fresh = CodeRecord.text(argument: identity + tail, expiresAtMilliseconds: expiry)
                let state = states[round % states.count]
                let stored = fresh.prefix(28) + state + fresh.dropFirst(30)
                let lua = try client.scriptsCodeRecord(reading: String(stored), making: (identity, expiry, "00", tail))
                let swift = try #require(CodeRecord(text: Substring(stored)))
                #expect(lua.made == fresh, "round \(round)")
                #expect(lua.read.identity == swift.identity && lua.read.expiry == swift.expiresAtMilliseconds)
                #expect(lua.read.state == swift.state && lua.read.wrongChecks == swift.wrongChecks, "state \(state)")
                #expect(lua.read.digest == swift.digest && lua.read.keyID == swift.keyID)
                #expect(lua.read.tail == swift.digest + swift.keyID + swift.sealed)
                let again = try client.scriptsCodeRecord(
                    reading: String(stored), making: (lua.read.identity, lua.read.expiry, lua.read.state, lua.read.tail))
                #expect(again.made == String(stored), "round \(round): a record made of what was read")
            }
        }
    }
}
