import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 36, item 4: a budget shard's name has one owner, `GateKeys.budgetShard`; Lua reads
/// it in one part (`budget-key.lua`: its kind) and names a budget's other shards in another
/// (`budget-room.lua`). Both are held to GateKeys on generated names in a real Redis.
@Suite("Budget shard names: GateKeys and the Lua parts agree")
struct BudgetKeyLayoutTests {
    @Test func theLuaPartsReadAndNameShardsAsGateKeysSpellsThem() async throws {
        try await withRedis { redis in
            let client = try redis.client()
            var random = SystemRandomNumberGenerator()
            let scopes = ["", "login", "reset-password", "a_b"]
            let kinds = ["CN", "+44", "total", "login-day.login", "ip.2001:db8:0:1::", "ip-number.0f3a9c", "all-hour."]
            let now: Int64 = 1_800_000_000_000
            for round in 0..<40 {
                let keys = GateKeys(prefix: ["rg", "my:app", "x"][round % 3])
                let scope = scopes.randomElement(using: &random)!, kind = kinds.randomElement(using: &random)!
                let shards = Int.random(in: 1...SendBudget.shardCount, using: &random)
                let full = Int.random(in: 0..<shards, using: &random)
                let first = keys.budgetShard(scope: scope, kind: kind, shard: full)
                // One send a shard: the first is full, so the part names the next one.
                try client.command("ZADD", first, String(now), "m\(round)")
                let read = try client.scriptsBudgetKey(first, limit: shards, shards: shards, window: 60_000, now: now)
                #expect(read.kind == kind, "\(first)")
                let next = keys.budgetShard(scope: scope, kind: kind, shard: (full + 1) % shards)
                #expect(read.room == (shards == 1 ? nil : next), "\(first) with \(shards) shards")
                try client.command("DEL", first)
            }
        }
    }
}
