import Foundation
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
    @Test func reportsTheNewMasterOfItsOwnSetOnly() async throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let loop = EventLoop.startThread(name: "subscription-test")
        let switches = Mutex<[RedisConfiguration.HostPort]>([])
        let holder = Holder()
        let port = redis.port
        loop.submitAndWait {
            holder.subscription = SentinelSubscription(
                loop: loop, sentinels: [.init(host: "127.0.0.1", port: port)], master: "resendgate"
            ) { master in switches.withLock { $0.append(master) } }
        }
        let client = try redis.client()
        // Publish until the subscription is in place (it connects in the background).
        let deadline = ContinuousClock.now + .seconds(5)
        while try client.command("PUBSUB", "NUMSUB", "+switch-master").array?.last?.integer != 1 {
            guard ContinuousClock.now < deadline else { Issue.record("never subscribed"); break }
            try await Task.sleep(for: .milliseconds(20))
        }
        try client.command("PUBLISH", "+switch-master", "other 127.0.0.1 1 127.0.0.1 2")
        try client.command("PUBLISH", "+switch-master", "resendgate 127.0.0.1 6379 127.0.0.9 6380")
        try client.command("PUBLISH", "+switch-master", "resendgate garbage")
        let seen = try await pollUntil { switches.withLock { $0.isEmpty ? nil : $0 } }
        #expect(seen == [.init(host: "127.0.0.9", port: 6380)])
        loop.submitAndWait { holder.subscription?.close(); holder.subscription = nil }
        loop.stop()
    }

    private func pollUntil<T>(_ body: () -> T?) async throws -> T? {
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline {
            if let value = body() { return value }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
