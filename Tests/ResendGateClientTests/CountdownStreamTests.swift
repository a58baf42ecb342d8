import Countdown
import Foundation
import ResendGateClient
import Testing

/// `countdownEvents(token:)` against a real server: first tick to `done`, and reconnects.
@Suite(.serialized) struct CountdownStreamTests {
    static let phone = "+8613800138000"

    @Test func streamRunsFromTheFirstTickToDone() async throws {
        try await withLiveGate(cooldown: "3s") { gate in
            let client = gate.client()
            let token = try #require(try await client.send(phone: Self.phone).countdownToken)
            var updates: [CountdownUpdate] = []
            let started = ContinuousClock.now
            for try await update in client.countdownEvents(token: token) { updates.append(update) }
            let took = ContinuousClock.now - started
            let seconds = updates.compactMap { update -> Int64? in
                if case .tick(let tick) = update { return tick.retryAfter }
                return nil
            }
            // [3, 2, 1] unless the machine took over a second to connect: every second
            // from the first tick down to 1, once each, then done. A reader that stalls
            // (a CI machine flushing a build to disk froze this process for 14 s once) is
            // given only the newest update, by design: then the seconds only fall.
            let first = try #require(seconds.first)
            #expect((1...3).contains(first))
            if took < .seconds(first) + .milliseconds(1_500) {
                #expect(seconds == Array(stride(from: first, through: 1, by: -1)))
            } else {
                #expect(zip(seconds, seconds.dropFirst()).allSatisfy { $0 > $1 }, "\(seconds) after \(took)")
            }
            #expect(updates.last == .done(reason: nil))
            #expect(updates.count == seconds.count + 1)
        }
    }

    @Test func unknownTokenThrowsNotFound() async throws {
        try await withLiveGate(cooldown: "2s") { gate in
            let error = await #expect(throws: ResendGateError.self) {
                for try await _ in gate.client().countdownEvents(token: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") {}
            }
            #expect(error?.code == ResendGateError.notFound && error?.status == 404)
        }
    }

    /// The server is killed mid-stream and started again on the same port: the stream
    /// reconnects after its retry delay and still ends with `done`, ticks continuing.
    @Test func reconnectsAfterTheServerDropsTheStream() async throws {
        try await withLiveGate(cooldown: "5s") { gate in
            let client = gate.client()
            let token = try #require(try await client.send(phone: Self.phone).countdownToken)
            var ticks: [Int64] = []
            var ending: CountdownUpdate?
            var restarted = false
            for try await update in client.countdownEvents(token: token) {
                switch update {
                case .tick(let tick):
                    ticks.append(tick.retryAfter)
                    if !restarted {
                        restarted = true
                        await gate.kill()
                        try await gate.restart()
                    }
                case .done:
                    ending = update
                }
            }
            #expect(ending == .done(reason: nil))
            #expect(ticks.first == 5)
            #expect(ticks.count >= 3)  // 5, then the new connection's first tick and more
            #expect(ticks.last == 1)
            #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $0.1 <= $0.0 })
        }
    }

    /// A release (the SMS provider failed) ends an open stream at once, with its reason,
    /// instead of at the 60 s deadline: the last update is `.done(reason: "released")`,
    /// within a second of the release, and the stream ends there.
    @Test func aReleaseEndsAnOpenStreamWithinASecond() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let client = gate.client()
            let token = try #require(try await client.send(phone: Self.phone).countdownToken)
            var updates: [CountdownUpdate] = []
            var released: ContinuousClock.Instant?
            var ended: ContinuousClock.Instant?
            for try await update in client.countdownEvents(token: token) {
                updates.append(update)
                if case .done = update { ended = .now }
                if released == nil {
                    released = .now
                    try await client.release(phone: Self.phone)
                }
            }
            #expect(updates.last == .done(reason: "released"))
            let delay = try #require(ended) - (try #require(released))
            #expect(delay < .seconds(1), "the release reached the stream after \(delay)")
            // One or two ticks (the first, perhaps the next second's), then done.
            #expect((2...3).contains(updates.count))
            // The token is stale now: a new stream of it is refused.
            let error = await #expect(throws: ResendGateError.self) {
                for try await _ in client.countdownEvents(token: token) {}
            }
            #expect(error?.code == ResendGateError.notFound)
        }
    }

    /// Two gates on one Redis: the app follows the countdown on gate B, its back end
    /// releases through gate A, and B's stream ends with `released` within a second.
    @Test func aReleaseOnAnotherGateEndsTheStream() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            try await gate.withSecondGate { secondURL in
                let onA = gate.client()
                let onB = ResendGateClient(baseURL: secondURL)
                let token = try #require(try await onA.send(phone: Self.phone).countdownToken)
                var last: CountdownUpdate?
                var released: ContinuousClock.Instant?
                var ended: ContinuousClock.Instant?
                for try await update in onB.countdownEvents(token: token) {
                    last = update
                    if case .done = update { ended = .now }
                    if released == nil {
                        released = .now
                        try await onA.release(phone: Self.phone)
                    }
                }
                #expect(last == .done(reason: "released"))
                let delay = try #require(ended) - (try #require(released))
                #expect(delay < .seconds(1), "the release reached gate B's stream after \(delay)")
            }
        }
    }

    /// Cancelling the task that follows a stream closes the connection.
    @Test func cancellingTheReaderEndsTheStream() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let client = gate.client()
            let token = try #require(try await client.send(phone: Self.phone).countdownToken)
            let seen = Counter()
            let reader = Task {
                for try await _ in client.countdownEvents(token: token) { seen.increment() }
                return seen.value
            }
            while seen.value == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
            reader.cancel()
            // Had cancelling not closed the stream, this would wait out the 60 s cooldown.
            let count = try await reader.value
            #expect(count >= 1 && count <= 2)
        }
    }
}

private final class Counter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    func increment() { lock.withLock { count += 1 } }
}

/// The parser on its own: the server's frames, a restart's `shutdown`, and hostile input.
@Suite struct ServerSentEventParserTests {
    @Test func parsesTicksHeartbeatsDoneAndShutdownInAnyChunking() throws {
        let stream = "event: tick\ndata: {\"retry_after\": 42, \"retry_after_ms\": 41873}\n\n: heartbeat\n\n"
            + "event: tick\r\ndata: {\"retry_after\": 41}\r\n\r\nretry: 1000\nevent: shutdown\ndata: {}\n\n"
            + "event: done\rdata: {\"retry_after\": 0, \"retry_after_ms\": 0, \"reason\": \"released\"}\r\r"
        let bytes = Array(stream.utf8)
        for chunkSize in [1, 2, 3, 7, bytes.count] {
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            var index = 0
            while index < bytes.count {
                events += try parser.feed(bytes[index..<min(index + chunkSize, bytes.count)])
                index += chunkSize
            }
            #expect(events.map(\.event) == ["tick", "tick", "shutdown", "done"], "chunks of \(chunkSize)")
            #expect(events[0].data == "{\"retry_after\": 42, \"retry_after_ms\": 41873}")
            #expect(events[2].data == "{}")
            #expect(events[3].data.contains("\"reason\": \"released\""))
            #expect(parser.retryMilliseconds == 1000)
        }
    }

    @Test func multiLineDataAndFieldsWithoutSpaceOrValue() throws {
        var parser = ServerSentEventParser()
        let events = try parser.feed(Array("data:a\ndata\ndata: b\nretry: soon\nid: 7\n\ndata: x\n".utf8))
        #expect(events == [ServerSentEvent(event: "message", data: "a\n\nb")])
        #expect(parser.retryMilliseconds == nil)
    }

    /// A server that never ends a line, or piles data into one event, is refused at 64 KiB.
    @Test func hostileStreamsAreRefusedAtTheBound() {
        var endless = ServerSentEventParser()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 4_096)
        let lineError = #expect(throws: ResendGateError.self) {
            for _ in 0..<1_000 { _ = try endless.feed(chunk) }
        }
        #expect(lineError?.code == ResendGateError.streamTooLarge)

        var piled = ServerSentEventParser()
        let line = Array(("data: " + String(repeating: "b", count: 1_000) + "\n").utf8)
        let eventError = #expect(throws: ResendGateError.self) {
            for _ in 0..<1_000 { _ = try piled.feed(line) }
        }
        #expect(eventError?.code == ResendGateError.streamTooLarge)
    }
}
