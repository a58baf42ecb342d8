@testable import RedisClient
@testable import ResendGate
import Testing

/// The key spellings are a storage format: a gate that spelled one differently would not
/// see the cooldowns, counts and records live gates wrote. Each is pinned here.
@Suite("GateKeys: every Redis key's spelling")
struct GateKeysTests {
    let keys = GateKeys(prefix: "rg")
    let login = try! Purpose("login")
    let number = "+8613800138000"

    @Test func numberKeys() {
        #expect(keys.cooldown(purpose: login, number: number) == "rg:{login:+8613800138000}:cooldown")
        #expect(keys.window(purpose: login, number: number) == "rg:{login:+8613800138000}:window")
        #expect(keys.refunds(purpose: login, number: number) == "rg:{login:+8613800138000}:refunds")
        let spelled = GateKeys.NumberKey.allCases.map { keys.key($0, purpose: .default, number: "ab12") }
        #expect(spelled == [
            "rg:{default:ab12}:cooldown", "rg:{default:ab12}:window", "rg:{default:ab12}:refunds",
            "rg:{default:ab12}:failed", "rg:{default:ab12}:trusted", "rg:{default:ab12}:code", "rg:{default:ab12}:no-ip",
            "rg:{default:ab12}:no-idem",
        ])
    }

    @Test func otherKeysAndTheChannel() {
        #expect(keys.ipSends(address: "203.0.113.7") == "rg:ip:{203.0.113.7}:sends")
        #expect(keys.ipSends(address: "2001:db8:1:2::/64") == "rg:ip:{2001:db8:1:2::/64}:sends")
        // SHA-1 of "abc".
        #expect(keys.idempotencyRecord(idempotencyKey: "abc") == "rg:idem:{a9993e364706816aba3e25717850c26c9cd0d89d}")
        #expect(keys.tokenSecret == "rg:token-secret")
        #expect(keys.releasedChannel == "rg:released")
        #expect(GateKeys(prefix: "app1").cooldown(purpose: .default, number: number) == "app1:{default:+8613800138000}:cooldown")
    }

    /// Every key of a number hashes to the slot of `slotKey`, where its calls run on a cluster.
    @Test func aNumbersKeysShareTheSlotOfItsSlotKey() {
        let slotKey = keys.slotKey(purpose: login, number: number)
        #expect(slotKey == "login:+8613800138000")
        for key in GateKeys.NumberKey.allCases {
            #expect(ClusterSlot.of(keys.key(key, purpose: login, number: number)) == ClusterSlot.of(slotKey))
        }
    }

    /// The scripts' arguments (written without making strings) spell keys as the strings do.
    @Test func argumentsSpellKeysAsTheStringsDo() {
        var arguments = RedisArguments()
        for key in GateKeys.NumberKey.allCases { keys.append(key, purpose: login, number: number, to: &arguments) }
        keys.appendIPSends(address: "198.51.100.1", to: &arguments)
        var out: [UInt8] = []
        arguments.writeRESP(into: &out)
        let expected = GateKeys.NumberKey.allCases.map { keys.key($0, purpose: login, number: number) }
            + [keys.ipSends(address: "198.51.100.1")]
        #expect(String(decoding: out, as: UTF8.self)
            == "*\(expected.count)\r\n" + expected.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined())
    }
}
