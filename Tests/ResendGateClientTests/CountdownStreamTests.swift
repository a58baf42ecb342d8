import Countdown
import Foundation
import ResendGateClient
import ResendGateTestSupport
import Testing

/// `countdownEvents(token:)` against a real server: first tick to `done`, and reconnects.
@Suite(.serialized) struct CountdownStreamTests {
    static let phone = "+8613800138000"

    @Test func streamRunsFromTheFirstTickToDone() async throws {
        try await withLiveGate(cooldown: "3s") { gate in
            let client = gate.client()
            // Before the send: its cooldown runs from a moment after this, however late the
            // answer reaches this task (a loaded machine starves the cooperative pool).
            let started = ContinuousClock.now
            let token = try #require(try await client.send(phone: Self.phone).countdownToken)
            var updates: [CountdownUpdate] = []
            do {
                for try await update in client.countdownEvents(token: token) { updates.append(update) }
            } catch let error as ResendGateError where error.code == ResendGateError.notFound && updates.isEmpty {
                // Only a process frozen past the 3 s cooldown before the stream connected
                // may find the token gone (the contract: a stale token is refused).
                let late = ContinuousClock.now - started
                #expect(late >= .seconds(3), "a fresh token refused after \(late)")
                return
            }
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
            let sent = StallWatch.mark()
            let token = try #require(try await client.send(phone: Self.phone).countdownToken)
            var ticks: [Int64] = []
            var ending: CountdownUpdate?
            var firstTick: Duration?
            var restarted: Duration?
            var received: [ContinuousClock.Instant] = []
            for try await update in client.countdownEvents(token: token) {
                received.append(.now)
                switch update {
                case .tick(let tick):
                    ticks.append(tick.retryAfter)
                    if restarted == nil {
                        firstTick = ContinuousClock.now - sent
                        await gate.kill()
                        try await gate.restart()
                        restarted = ContinuousClock.now - sent
                    }
                case .done:
                    ending = update
                }
            }
            let first = try #require(ticks.first)
            #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $0.1 <= $0.0 }, "\(ticks)")
            // The server's second 5 unless this process took a second or more to connect.
            let toFirst = try #require(firstTick)
            if toFirst < .seconds(1) {
                #expect(first == 5)
            } else {
                #expect((4 - toFirst.components.seconds...5).contains(first), "\(ticks) after \(toFirst)")
            }
            // 5, then the new connection's first tick and more, down to 1, then done: when
            // the restart came with seconds to spare and no update was read late (a stalled
            // reader is given only the newest update, by design). A process frozen while it
            // killed and restarted the server may reconnect after the cooldown ended, which
            // the contract ends with `not_found`.
            let restartTook = try #require(restarted)
            let gaps = zip(received, received.dropFirst()).map { $1 - $0 }
            let readLate = gaps.dropFirst().contains { $0 > .milliseconds(1_500) }
            if restartTook < .milliseconds(2_500) && !readLate && StallWatch.shared.stalled(from: sent) < .milliseconds(500) {
                #expect(ending == .done(reason: nil))
                #expect(ticks.count >= 3, "\(ticks)")
                #expect(ticks.last == 1, "\(ticks)")
            } else {
                #expect(ending == .done(reason: nil) || (restartTook >= .seconds(4) && ending == .done(reason: ResendGateError.notFound.rawValue)),
                        "\(String(describing: ending)) after a restart \(restartTook) after the send, gaps \(gaps)")
            }
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
                    released = StallWatch.mark()
                    try await client.release(phone: Self.phone)
                }
            }
            #expect(updates.last == .done(reason: "released"))
            // Within a second of the release, less the time this process stood frozen.
            let (start, end) = (try #require(released), try #require(ended))
            let stalled = StallWatch.shared.stalled(from: start, to: end)
            #expect(end - start - stalled < .seconds(1), "the release reached the stream after \(end - start) (\(stalled) of it stalled)")
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
                        released = StallWatch.mark()
                        try await onA.release(phone: Self.phone)
                    }
                }
                #expect(last == .done(reason: "released"))
                // Within a second of the release, less the time this process stood frozen.
                let (start, end) = (try #require(released), try #require(ended))
                let stalled = StallWatch.shared.stalled(from: start, to: end)
                #expect(end - start - stalled < .seconds(1), "the release reached gate B's stream after \(end - start) (\(stalled) of it stalled)")
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
            // This task may see the first update late (a starved cooperative pool), the
            // reader going on meanwhile: a tick a second more for each second late.
            let late = ContinuousClock.now - (seen.firstAt ?? .now)
            // Had cancelling not closed the stream, this would wait out the 60 s cooldown.
            let count = try await reader.value
            #expect(count >= 1 && count <= 2 + Int(late.components.seconds), "\(count) updates, cancelled \(late) after the first")
        }
    }
}

private final class Counter: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private var first: ContinuousClock.Instant?

    var value: Int { lock.withLock { count } }
    var firstAt: ContinuousClock.Instant? { lock.withLock { first } }

    func increment() {
        let now = ContinuousClock.now
        lock.withLock {
            count += 1
            if first == nil { first = now }
        }
    }
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
