import Foundation
import ResendGate
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// `resendgate serve` on a Redis Cluster: what it says at start, and what `/metrics`
/// counts while a slot moves. Heavy (six Redis nodes).
@Suite("serve on a Redis Cluster", .serialized, .ownThread)
struct ClusterServeTests {
    /// The start-up line names the seeds (not the default Redis URL, which is not dialled);
    /// the redirections a slot's move causes are counted by kind, not as errors, and no
    /// send of the slot's numbers is answered 503 (the policy caps IPs, so a script decides).
    @Test(.timeLimit(.minutes(2))) func theStartLineNamesTheSeedsAndRedirectsAreNotErrors() throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let gate = try TestGate(serve: [
            "--workers", "1", "--region", "CN", "--ip-max-sends", "1000000", "--log-level", "warning",
            "--redis-timeout", "1s", "--redis-cluster", cluster.seedList,
        ], ownRedis: false)
        defer { gate.stop() }
        let line = try #require(gate.process?.lines(containing: "listening on").first)
        #expect(line.contains("Redis Cluster seeds \(cluster.seedList)"), "\(line)")
        #expect(!line.contains("redis://"), "\(line)")

        // Numbers whose keys share one slot, with running cooldowns.
        let slot = cluster.slot(forKey: gateKey(.cooldown, "+8613800138000"))
        var sample: [String] = []
        var candidate = 0
        while sample.count < 6 && candidate < 3_000_000 {
            let number = "+86138\(String(format: "%08d", candidate))"
            if cluster.slot(forKey: gateKey(.cooldown, number)) == slot { sample.append(number) }
            candidate += 1
        }
        let client = gate.client()
        for number in sample { #expect(try client.send(phone: number).status == 200, "\(number)") }
        let source = try cluster.masterPort(forSlot: slot)
        let target = try #require(try cluster.masters().map(\.port).first { $0 != source })
        var during: [Int] = []
        try cluster.migrateSlot(slot, from: source, to: target, batchSize: 1_000) { step in
            // Every key moved, the slot not yet the target's: each send meets ASK.
            guard case .moved = step else { return }
            for number in sample { during.append(try client.send(phone: number).status) }
        }
        // The slot is the target's: the first send meets MOVED.
        let after = try sample.map { try client.send(phone: $0).status }
        #expect(during == Array(repeating: 429, count: sample.count), "\(during)")
        #expect(after == Array(repeating: 429, count: sample.count), "\(after)")

        let metrics = try PrometheusSamples(try client.get("/metrics").text)
        #expect(metrics.type("resendgate_redis_redirects_total") == "counter")
        #expect((metrics.value("resendgate_redis_redirects_total", #"kind="ask""#) ?? 0) >= Double(sample.count))
        #expect((metrics.value("resendgate_redis_redirects_total", #"kind="moved""#) ?? 0) >= 1)
        #expect(metrics.value("resendgate_redis_errors_total", "") == 0)
    }
}
