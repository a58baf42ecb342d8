import Foundation
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// The cooldown value's layout is written twice, in Swift (`CooldownValue`, the plain
/// cooldown's `SET`) and in Lua (`prelude.lua`, every script): the two, on generated nonces
/// and deadlines, make the same text and read the same nonce and deadline back.
@Suite("A cooldown's value: Swift and the scripts' prelude agree")
struct CooldownValueLayoutTests {
    @Test func swiftAndLuaMakeAndReadTheSameValues() async throws {
        try await withRedis { redis in
            let client = try redis.client()
            var random = SystemRandomNumberGenerator()
            let deadlines: [Int64] = [0, 1, 1_764_000_000_000, (1 << 48) - 1] + (0..<60).map { _ in Int64.random(in: 0..<(1 << 48), using: &random) }
            for deadline in deadlines {
                let nonce = CooldownNonce(bytes: (0..<CooldownNonce.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) })
                let swift = CooldownValue(nonce: nonce, deadlineMilliseconds: deadline).text
                let linked = swift + " rg:idem:{abc}"
                let lua = try client.scriptsCooldownValue(nonce: nonce.text, deadline: deadline, reading: linked)
                #expect(lua.made == swift, "deadline \(deadline)")
                #expect(lua.nonce == nonce.text)
                #expect(lua.deadline == deadline)
                let read = try #require(CooldownValue(text: Substring(linked)))
                #expect(read.nonce.text == lua.nonce && read.deadlineMilliseconds == lua.deadline)
            }
        }
    }
}
