import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// A release reaches every open event stream of its cooldown, on any gate, within one
/// second: the release script publishes the cooldown's value and every worker follows
/// that channel. Real `resendgate serve` processes on a real Redis.
@Suite("Countdown streams end when their cooldown is released", .serialized, .ownThread)
struct CountdownReleaseTests {
    static let phone = "+8613800138000"
    static let other = "+8613800138001"

    /// Two gates, two workers each: streams of the token on both gates (so on both
    /// workers of each, whichever the kernel hands them to) end with `done` carrying
    /// `released` within a second of gate A's release; a stream of another number's
    /// cooldown goes on ticking. Redis has a password: the subscriber authenticates too.
    @Test func releaseOnOneGateEndsTheStreamsOnEveryGateWithinASecond() throws {
        let redis = try RedisServer(RedisServer.Options(password: "release-secret"))
        defer { redis.stop() }
        let gates = try ReleaseTestGates(count: 2, redis: ["--redis", redis.url])
        defer { gates.stop() }
        let token = try gates.send(Self.phone, on: 0)
        let otherToken = try gates.send(Self.other, on: 0)
        let streams = try [0, 1, 1, 1, 1].map { try gates.openStream(token, on: $0) }
        let bystander = try gates.openStream(otherToken, on: 1)

        let releasing = StallWatch.mark()
        #expect(try gates.release(Self.phone, on: 0) == 204)
        for stream in streams {
            try stream.expectReleased(since: releasing)
            #expect(try stream.next() == nil)  // the response ends and the connection closes
        }
        // The other cooldown's stream was not touched: its next event is a tick, and only
        // it is still open on gate B.
        #expect(try bystander.next()?.event == "tick")
        try waitUntilTrue("gate B has only the bystander's stream open", timeout: .seconds(3)) {
            try gates.openStreams(on: 1) == 1
        }
        #expect(try gates.openStreams(on: 0) == 0)
        // And the released token stays stale.
        #expect(try ReleaseTestGates.request(port: gates.ports[1], "GET", "/v1/countdowns/\(token)/events").status == 404)
    }

    /// A cooldown is replaced only once it is gone: released (its streams got `done` from
    /// the release) or ended (they got `done` at their deadline). The release of the old
    /// cooldown ends its streams even when a new send replaces it at once, and leaves the
    /// new cooldown's streams alone.
    @Test func aReleasedCooldownReplacedAtOnceEndsItsStreamsAndNotTheNewOnes() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let gates = try ReleaseTestGates(count: 2, redis: ["--redis", redis.url])
        defer { gates.stop() }
        let old = try gates.send(Self.phone, on: 0)
        let stream = try gates.openStream(old, on: 1)
        let releasing = StallWatch.mark()
        #expect(try gates.release(Self.phone, on: 0) == 204)
        let new = try gates.send(Self.phone, on: 0)  // the replacement
        #expect(new != old)
        let newStream = try gates.openStream(new, on: 1)
        try stream.expectReleased(since: releasing)
        #expect(try newStream.next()?.event == "tick")
        #expect(try ReleaseTestGates.request(port: gates.ports[0], "GET", "/v1/countdowns/\(old)").status == 404)
    }

    /// A cooldown that ran out: its stream ends with a plain `done` (no reason) at its
    /// deadline, so the send that replaces it right after needs no message of its own.
    @Test func anExpiredCooldownsStreamEndsAtItsDeadlineBeforeAReplacement() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let gates = try ReleaseTestGates(count: 2, redis: ["--redis", redis.url], cooldown: "1s")
        defer { gates.stop() }
        let old = try gates.send(Self.phone, on: 0)
        let opened = StallWatch.mark()
        let stream = try gates.openStream(old, on: 1)
        let done = try #require(try stream.nextDone())
        #expect(done.data == "{\"retry_after\": 0, \"retry_after_ms\": 0}")
        #expect(StallWatch.shared.ran(since: opened) < .milliseconds(1_500), "\(ContinuousClock.now - opened) in all")
        let new = try gates.send(Self.phone, on: 0)  // allowed: the old cooldown is over
        #expect(new != old)
    }

    /// Redis is killed and started again on the same port and directory (its AOF keeps
    /// the cooldown): the subscriber connection comes back by itself, the stream opened
    /// before survives the re-check, and a release afterwards still ends it in a second.
    @Test func theSubscriberReconnectsAfterRedisRestarts() throws {
        let redis = try RedisServer(RedisServer.Options(appendOnly: true, appendFsync: .always))
        defer { redis.stop() }
        let gates = try ReleaseTestGates(count: 1, redis: ["--redis", redis.url])
        defer { gates.stop() }
        let token = try gates.send(Self.phone, on: 0)
        let stream = try gates.openStream(token, on: 0)
        try waitUntilTrue("the stream's worker subscribed") { try releaseSubscribers(redis.client()) == 1 }
        redis.kill()
        try redis.restart()
        try waitUntilTrue("the worker subscribed again") { try releaseSubscribers(redis.client()) == 1 }
        try ReleaseTestGates.waitUntilReady(port: gates.ports[0])
        #expect(try stream.next()?.event == "tick")  // the cooldown is still there: not ended
        let releasing = StallWatch.mark()
        #expect(try gates.release(Self.phone, on: 0) == 204)
        try stream.expectReleased(since: releasing)
    }

    /// A release published while the subscriber was away is not heard, so a subscriber
    /// that is back looks its streams' cooldowns up: one gone ends its streams. Here the
    /// cooldown key is deleted behind the gate's back (no message at all), then the
    /// subscriber connection is killed; it reconnects and ends the stream.
    @Test func aCooldownGoneWhileTheSubscriberWasAwayEndsItsStreamsOnceItIsBack() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let gates = try ReleaseTestGates(count: 1, redis: ["--redis", redis.url])
        defer { gates.stop() }
        let token = try gates.send(Self.phone, on: 0)
        let stream = try gates.openStream(token, on: 0)
        let client = try redis.client()
        try waitUntilTrue("the stream's worker subscribed") { try releaseSubscribers(client) == 1 }
        // A fresh subscription re-checks the streams' cooldowns at once: let that check
        // pass (a tick comes after it) before the key goes, or it would see the delete.
        #expect(try stream.next()?.event == "tick")
        guard case .array(let keys) = try client.command("KEYS", "*:cooldown"), keys.count == 1,
              let cooldown = keys[0].string else { throw CountdownTestError("no single cooldown key") }
        #expect(try client.command("DEL", cooldown).integer == 1)
        #expect(try stream.next()?.event == "tick")  // nothing was published: still counting
        let killing = StallWatch.mark()
        #expect(try client.command("CLIENT", "KILL", "TYPE", "pubsub").integer == 1)
        try stream.expectReleased(since: killing)
    }

    /// The release table is bounded by the open streams: one entry per followed cooldown
    /// (however many streams share it), none for unknown tokens, and each entry goes with
    /// its cooldown's last stream or its release.
    @Test func theReleaseTableHoldsOnlyCooldownsWithOpenStreams() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let gates = try ReleaseTestGates(count: 1, redis: ["--redis", redis.url], workers: 1)
        defer { gates.stop() }
        let phones = (0..<6).map { "+86138001380\(String(format: "%02d", $0))" }
        let tokens = try phones.map { try gates.send($0, on: 0) }
        let shared = try (0..<4).map { _ in try gates.openStream(tokens[0], on: 0) }
        let single = try tokens.dropFirst().map { try gates.openStream($0, on: 0) }
        for _ in 0..<10 {  // unknown tokens are refused before any stream or entry exists
            let status = try ReleaseTestGates.request(port: gates.ports[0], "GET", "/v1/countdowns/AAAAAAAAAAAAAAAAAAAAAA/events").status
            #expect(status == 404)
        }
        let followed = { try gates.sample("resendgate_sse_followed_cooldowns", on: 0) }
        #expect(try gates.openStreams(on: 0) == 9)
        #expect(try followed() == 6)
        for stream in shared.dropLast() { stream.connection.close() }
        try waitUntilTrue("three streams closed", timeout: .seconds(3)) { try gates.openStreams(on: 0) == 6 }
        #expect(try followed() == 6)  // the cooldown still has a stream
        shared.last!.connection.close()
        try waitUntilTrue("its last stream closed", timeout: .seconds(3)) { try gates.openStreams(on: 0) == 5 }
        #expect(try followed() == 5)
        #expect(try gates.release(phones[1], on: 0) == 204)
        #expect(try single[0].nextDone()?.data == ReleaseTestGates.released)
        try waitUntilTrue("the released stream is gone", timeout: .seconds(3)) { try gates.openStreams(on: 0) == 4 }
        #expect(try followed() == 4)
        #expect(try gates.sample("resendgate_sse_released_total", on: 0) == 1)
        for stream in single { stream.connection.close() }
        try waitUntilTrue("every stream closed", timeout: .seconds(3)) { try gates.openStreams(on: 0) == 0 }
        #expect(try followed() == 0)
    }
}
