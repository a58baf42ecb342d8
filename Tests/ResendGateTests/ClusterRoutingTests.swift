@testable import RedisClient
@testable import ResendGate
import GateRuntime
import Testing

@Suite("Redis Cluster routing")
struct ClusterRoutingTests {
    @Test func slotsFollowRedisKeyHashingWithHashTags() {
        #expect(ClusterSlot.of("foo") == 12182)
        #expect(ClusterSlot.of("bar") == 5061)
        #expect(ClusterSlot.of("{user1000}.following") == ClusterSlot.of("{user1000}.followers"))
        #expect(ClusterSlot.of("rg:{login:+8613800138000}:cooldown") == ClusterSlot.of("login:+8613800138000"))
        // An empty tag ("{}") hashes the whole key.
        #expect(ClusterSlot.of("{}foo") == Int(ClusterSlot.crc16(Array("{}foo".utf8)[...]) & 0x3FFF))
    }

    @Test func readsRedirections() {
        #expect(RedisClusterClient.redirect("MOVED 3999 127.0.0.1:6381", prefix: "MOVED ")
            == RedisConfiguration.HostPort(host: "127.0.0.1", port: 6381))
        #expect(RedisClusterClient.redirect("ASK 3999 10.0.0.1:7000", prefix: "ASK ")
            == RedisConfiguration.HostPort(host: "10.0.0.1", port: 7000))
        #expect(RedisClusterClient.redirect("MOVED 3999", prefix: "MOVED ") == nil)
        #expect(RedisClusterClient.redirect("ERR nope", prefix: "MOVED ") == nil)
    }

    @Test func slotMapNamesEveryOwnerAndTheAskedNodeForAnEmptyHost() throws {
        let reply = RedisReply.array([
            .array([.integer(0), .integer(8191), .array([.bulk(Array("".utf8)), .integer(7001), .bulk(Array("id1".utf8))])]),
            .array([.integer(8192), .integer(16383), .array([.bulk(Array("127.0.0.2".utf8)), .integer(7002)])]),
        ])
        let asked = RedisConfiguration.HostPort(host: "127.0.0.1", port: 7001)
        let map = try #require(RedisClusterClient.slotMap(reply, askedNode: asked))
        #expect(map[0] == asked)
        #expect(map[8191] == asked)
        #expect(map[8192] == RedisConfiguration.HostPort(host: "127.0.0.2", port: 7002))
        #expect(map[16383] == RedisConfiguration.HostPort(host: "127.0.0.2", port: 7002))
        #expect(RedisClusterClient.slotMap(.array([.array([.integer(5), .integer(1)])]), askedNode: asked) == nil)
        #expect(RedisClusterClient.slotMap(.null, askedNode: asked) == nil)
    }

    @Test func readsNodeLists() throws {
        #expect(try RedisConfiguration.HostPort.parseList("127.0.0.1:7101, 127.0.0.1:7102", field: "redis-cluster")
            == [.init(host: "127.0.0.1", port: 7101), .init(host: "127.0.0.1", port: 7102)])
        for bad in ["", "host", "host:0", "host:99999", ":7000"] {
            #expect(throws: ConfigurationError.self) { try RedisConfiguration.HostPort.parseList(bad, field: "redis-cluster") }
        }
    }

    /// After ASK, a script call names its first key alone and passes the others first in
    /// ARGV after their count; the variant takes them back and reads MGET one key at a time.
    @Test func anAskedScriptCallNamesItsFirstKeyAlone() {
        var args = RedisArguments()
        args.append("EVALSHA", "abc", "3", "k1", "k2", "k3", "now", "")
        args.nameFirstKeyOnly()
        var resp: [UInt8] = []
        args.writeRESP(into: &resp)
        let expected = ["EVALSHA", "abc", "1", "k1", "2", "k2", "k3", "now", ""]
            .map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()
        #expect(String(decoding: resp, as: UTF8.self) == "*9\r\n" + expected)
        // One key: the count of the others is 0.
        var one = RedisArguments()
        one.append("EVALSHA", "abc", "1", "k1", "a")
        one.nameFirstKeyOnly()
        one.writeRESP(into: &resp)
        #expect(String(decoding: resp, as: UTF8.self) == "*6\r\n" + ["EVALSHA", "abc", "1", "k1", "0", "a"].map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined())

        let script = RedisScript("local call = redis.call\nlocal held = call('MGET', KEYS[1], KEYS[2])\nreturn redis.call('MGET', KEYS[1])\n")
        let variant = RedisClusterClient.askedVariant(of: script)
        #expect(variant.sha1 != script.sha1)
        #expect(!variant.source.contains("'MGET'"))
        #expect(variant.source.contains("local held = mgetByKey(KEYS[1], KEYS[2])"))
        #expect(variant.source.contains("return mgetByKey(KEYS[1])"))
    }
}
