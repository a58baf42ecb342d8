import Foundation
import GateEventLoop
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Gates come and go (a CLI run, a test, a reload): dropping one must never touch freed memory.
@Suite("Gate: lifecycle against a real Redis", .ownThread)
struct GateLifecycleTests {
    @Test func droppingGatesRightAfterACallNeverCrashes() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        // An hour's cooldown: 300 gates take a minute or more on a loaded machine, and a
        // key that expired meanwhile would read as a decision lost.
        for index in 0..<300 {
            let gate = try makeGate(url: redis.url, policy: Policy(ladder: [.seconds(3600)]))
            let decision = try await gate.reserve(phone: "+86137\(String(format: "%08d", index))")
            #expect(decision.allowed)
        }
        #expect(try redis.client().keys().count == 300)
    }
}

/// The last reference to a loop may go before its timers do: when a `Gate` is dropped, its
/// connection can be the last holder of the loop, and Swift releases the connection's `loop`
/// before its timers. The timers must keep the libevent base alive until they are freed.
@Suite("EventLoop and EventTimer lifetimes")
struct EventLoopLifetimeTests {
    @Test func aTimerMayOutliveEveryOtherReferenceToItsLoop() {
        var loop: EventLoop? = EventLoop()
        let timer = EventTimer(loop: loop!) {}
        timer.schedule(after: .seconds(60))
        loop = nil
        #expect(timer.isScheduled)
        timer.cancel()
        #expect(!timer.isScheduled)
    }
}
