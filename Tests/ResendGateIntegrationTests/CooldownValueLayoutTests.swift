import Foundation
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// The cooldown value's layout is written twice, in Swift (`CooldownValue`, the plain
/// cooldown's `SET`) and in Lua (`prelude.lua`, every script): the two, on generated nonces
/// and deadlines, make the same text and read the same nonce and deadline back. A window
/// key's layout is read in Lua by one part (`window-split.lua`, in every script that reads a
/// window) and in Swift by the tests' reader (`WindowValue`): on generated windows, with and
/// without their own cooldown, the two split a value the same way.
@Suite("A cooldown's value and a window's: Swift and the scripts agree")
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

    @Test func swiftAndLuaSplitTheSameValues() async throws {
        try await withRedis { redis in
            let client = try redis.client()
            var random = SystemRandomNumberGenerator()
            func nonce() -> CooldownNonce {
                CooldownNonce(bytes: (0..<CooldownNonce.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) })
            }
            for round in 0..<60 {
                let sends = (0..<(round % 18)).map { _ in
                    WindowSend(time: Int64.random(in: 1_000_000_000_000..<10_000_000_000_000, using: &random), nonce: nonce().text)
                }
                let deadline = Int64.random(in: 0..<(1 << 48), using: &random)
                let cooldown = CooldownValue(nonce: nonce(), deadlineMilliseconds: deadline).text
                // No cooldown, a cooldown, one linked to its idempotency record.
                let own = [nil, cooldown, cooldown + " rg:idem:{abc}"][round % 3]
                let window = WindowValue(sends: sends, own: own)
                let text = window.text
                #expect(text.utf8.count == sends.count * 29 + (own.map { $0.utf8.count + 1 } ?? 0))
                #expect(WindowValue(text: text) == window)
                let lua = try client.scriptsWindowValue(text)
                #expect(WindowValue(text: lua.sends) == WindowValue(sends: sends), "round \(round)")
                #expect(lua.own == own, "round \(round)")
                if let own = lua.own {
                    let read = try #require(CooldownValue(text: Substring(own)))
                    #expect(read.deadlineMilliseconds == deadline)
                }
            }
        }
    }
}
