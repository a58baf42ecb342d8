import Foundation
@testable import RedisClient
@testable import ResendGate
import ResendGateTestSupport
import Synchronization
import Testing

/// Keeps a loop-confined subscription alive between calls on its loop.
private final class Holder: @unchecked Sendable {
    var subscription: SentinelSubscription?
}

@Suite("Sentinel +switch-master subscription")
struct SentinelSubscriptionTests {
    /// A plain Redis carries the same pub/sub message a Sentinel sends after a failover.
    /// (Before, a refused connect left the subscription dead for good: hiredis frees a
    /// context whose connect failed without calling its disconnect callback.)
    @Test func reportsTheNewMasterOfItsOwnSetOnly() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let loop = EventLoop.startThread(name: "subscription-test")
        let switches = Mutex<[RedisConfiguration.HostPort]>([])
        let holder = Holder()
        let port = redis.port
        // The first Sentinel refuses the connection: the subscription moves on to the next.
        let refusing = try closedPort()
        let timeouts = try RedisConfiguration(url: redis.url)
        loop.submitAndWait {
            holder.subscription = SentinelSubscription(
                loop: loop, sentinels: [.init(host: "127.0.0.1", port: refusing), .init(host: "127.0.0.1", port: port)],
                master: "resendgate", timeouts: timeouts
            ) { master in switches.withLock { $0.append(master) } }
        }
        let client = try redis.client()
        // The subscription connects in the background: publish (the other set's switch,
        // ours, and a malformed one) until ours is seen, for at most 10 s.
        let deadline = ContinuousClock.now + .seconds(10)
        while switches.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
            try client.command("PUBLISH", "+switch-master", "other 127.0.0.1 1 127.0.0.1 2")
            try client.command("PUBLISH", "+switch-master", "resendgate 127.0.0.1 6379 127.0.0.9 6380")
            try client.command("PUBLISH", "+switch-master", "resendgate garbage")
            try await Task.sleep(for: .milliseconds(50))
        }
        let seen = switches.withLock { $0 }
        #expect(!seen.isEmpty, "no switch seen within 10 s")
        #expect(seen.allSatisfy { $0 == .init(host: "127.0.0.9", port: 6380) }, "\(seen)")
        loop.submitAndWait { holder.subscription?.close(); holder.subscription = nil }
        loop.stop()
    }

}
