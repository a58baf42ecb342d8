import Foundation
@testable import RedisClient
@testable import ResendGate
import GateEventLoop
import ResendGateTestSupport
import Synchronization
import Testing

/// Keeps a loop-confined subscription alive between calls on its loop.
private final class Holder: @unchecked Sendable {
    var subscription: SentinelSubscription?
}

@Suite("Sentinel +switch-master subscription", .ownThread)
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
        // The subscription connects in the background: publish (the other set's switch, ours,
        // and a malformed one) until a subscriber receives ours (PUBLISH answers how many
        // did). Bounded by attempts, not by the clock: a stalled test process must not run
        // out of time before the subscription could answer.
        var delivered = false
        for _ in 0..<400 where !delivered {
            try client.command("PUBLISH", "+switch-master", "other 127.0.0.1 1 127.0.0.1 2")
            let receivers = try client.command("PUBLISH", "+switch-master", "resendgate 127.0.0.1 6379 127.0.0.9 6380")
            try client.command("PUBLISH", "+switch-master", "resendgate garbage")
            delivered = (receivers.integer ?? 0) > 0
            if !delivered { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(delivered, "no subscriber after 400 attempts")
        // Delivered to its socket: its loop hands it on.
        for _ in 0..<400 where switches.withLock({ $0.isEmpty }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let seen = switches.withLock { $0 }
        #expect(!seen.isEmpty, "no switch seen")
        #expect(seen.allSatisfy { $0 == .init(host: "127.0.0.9", port: 6380) }, "\(seen)")
        loop.submitAndWait { holder.subscription?.close(); holder.subscription = nil }
        loop.stop()
    }

}
