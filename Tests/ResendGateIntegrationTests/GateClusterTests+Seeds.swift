import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Seeds that are not (or no longer) nodes of the cluster.
extension GateClusterTests {
    /// A seed the cluster's map does not name (a node that left the cluster, here a port
    /// nothing listens on) is dialled until the map is read, then closed, with one info
    /// line: no more attempts at it, however long the gate runs.
    @Test(.timeLimit(.minutes(1))) func aSeedTheMapDoesNotNameIsNoLongerDialled() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let dead = "127.0.0.1:\(try closedPort())"
        let log = LogCapture()
        let base = try RedisConfiguration(url: RedisConfiguration.defaultURL, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        // The dead seed first: it is the one asked first too.
        let seeds = try RedisConfiguration.HostPort.parseList(dead + "," + cluster.seedList, field: "redis-cluster")
        let gate = Gate(
            configuration: try GateConfiguration(redis: try .cluster(seeds: seeds, base: base), defaultRegion: "CN"),
            logger: log.logger(.debug))
        _ = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in try await gate.peek(phone: "+8613800138000") }
        let dropped = try await poll(every: .milliseconds(50), upTo: .seconds(5)) {
            log.lines(at: .info).first { $0.contains("seed \(dead) is not in the cluster's map") }
        }
        #expect(dropped != nil, "\(log.all.suffix(10))")
        // Attempts at the dead seed: none after it was dropped (with the reconnect backoff at
        // most 500 ms, two seconds held several before).
        let mentions = { log.all.filter { $0.contains("redis \(dead):") }.count }
        let before = mentions()
        try await Task.sleep(for: .seconds(2))
        #expect(mentions() == before, "\(log.all.filter { $0.contains(dead) })")
        #expect(log.all.filter { $0.contains("seed \(dead)") }.count == 1)
        // The gate still decides.
        #expect(try await gate.reserve(phone: "+8613800138000").allowed)
    }
}
