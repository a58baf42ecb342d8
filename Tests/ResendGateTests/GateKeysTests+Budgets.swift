@testable import RedisClient
@testable import ResendGate
import Testing

/// The spelling of a budget's shards is a storage format too; each shard has a slot of its own.
extension GateKeysTests {
    @Test func budgetShardKeys() {
        #expect(keys.budgetShard(scope: "", kind: "CN", shard: 3) == "rg:budget:{*:CN:3}")
        #expect(keys.budgetShard(scope: "login", kind: "+44", shard: 0) == "rg:budget:{login:+44:0}")
        #expect(keys.budgetShard(scope: "", kind: "total", shard: 7) == "rg:budget:{*:total:7}")
        var arguments = RedisArguments()
        keys.appendBudgetShard(scope: "login", kind: "total", shard: 5, to: &arguments)
        var out: [UInt8] = []
        arguments.writeRESP(into: &out)
        let expected = keys.budgetShard(scope: "login", kind: "total", shard: 5)
        #expect(String(decoding: out, as: UTF8.self) == "*1\r\n$\(expected.utf8.count)\r\n\(expected)\r\n")
    }

    /// A budget's 8 shards land in 8 slots, so a cluster can spread them over its masters.
    @Test func aBudgetsShardsHaveSlotsOfTheirOwn() {
        for kind in ["CN", "GB", "+44", "+1", "total"] {
            let slots = Set((0..<SendBudget.shardCount).map { ClusterSlot.of(keys.budgetShard(scope: "", kind: kind, shard: $0)) })
            #expect(slots.count == SendBudget.shardCount, "\(kind)")
        }
    }
}
