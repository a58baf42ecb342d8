import Countdown
import Testing
@testable import ResendGateServer

/// The SSE tick logic in virtual time: no sleeping, exact instants.
@Suite("CountdownEventSource: SSE frames from the shared countdown engine")
struct CountdownEventSourceTests {
    final class Recorder: @unchecked Sendable {
        var frames: [String] = []
        var finished = 0
    }

    static func source(_ center: CountdownCenter, _ id: CountdownID, remaining: Duration, _ recorder: Recorder) -> CountdownEventSource {
        CountdownEventSource(
            center: center, countdownID: id, deadline: center.clock.now.advanced(by: remaining),
            send: { frame, _ in recorder.frames.append(String(decoding: frame, as: UTF8.self)) }, finish: { recorder.finished += 1 })
    }

    /// Two streams on one center in virtual time, both started, one second in: for the
    /// tests of one ending early while the other runs on.
    struct TwoStreams {
        let clock = VirtualClock()
        let center: CountdownCenter
        let first: CountdownEventSource, second: CountdownEventSource
        let firstFrames = Recorder(), secondFrames = Recorder()

        init(_ firstID: CountdownID, _ firstRemaining: Duration, _ secondID: CountdownID, _ secondRemaining: Duration) {
            center = CountdownCenter(clock: clock, scheduler: clock)
            first = CountdownEventSourceTests.source(center, firstID, remaining: firstRemaining, firstFrames)
            second = CountdownEventSourceTests.source(center, secondID, remaining: secondRemaining, secondFrames)
            first.start()
            second.start()
            clock.advance(by: .seconds(1))
        }
    }

    static func tick(_ seconds: Int, _ milliseconds: Int) -> String {
        "event: tick\ndata: {\"retry_after\": \(seconds), \"retry_after_ms\": \(milliseconds)}\n\n"
    }

    @Test func ticksAtOnceThenAtEachWholeSecondThenDone() {
        let clock = VirtualClock()
        let center = CountdownCenter(clock: clock, scheduler: clock)
        let recorder = Recorder()
        let source = Self.source(center, "t#1", remaining: .milliseconds(2_500), recorder)
        source.start()
        #expect(recorder.frames == [Self.tick(3, 2_500)])
        clock.advance(by: .milliseconds(499))
        #expect(recorder.frames.count == 1)
        clock.advance(by: .milliseconds(1))
        #expect(recorder.frames.last == Self.tick(2, 2_000))
        clock.advance(by: .seconds(1))
        #expect(recorder.frames.last == Self.tick(1, 1_000))
        #expect(recorder.finished == 0)
        clock.advance(by: .seconds(1))
        #expect(recorder.frames.last == "event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0}\n\n")
        #expect(recorder.frames.count == 4)
        #expect(recorder.finished == 1)
        #expect(clock.pendingWakeUps == 0)
        clock.advance(by: .seconds(5))
        #expect(recorder.frames.count == 4)
    }

    @Test func manyStreamsShareOneWakeUp() {
        let clock = VirtualClock()
        let center = CountdownCenter(clock: clock, scheduler: clock)
        let recorders = (0..<100).map { _ in Recorder() }
        let sources = recorders.enumerated().map { index, recorder in
            Self.source(center, CountdownID("t#\(index)"), remaining: .seconds(60), recorder)
        }
        for source in sources { source.start() }
        #expect(clock.pendingWakeUps == 1)
        clock.advance(by: .seconds(60))
        #expect(recorders.allSatisfy { $0.frames.count == 61 && $0.finished == 1 })
        #expect(clock.firedWakeUps == 60)
    }

    @Test func aClientLeavingStopsTheTickerAndForgetsTheCountdown() {
        let streams = TwoStreams("t#1", .seconds(10), "t#2", .seconds(3))
        let (clock, center, leaving, staying) = (streams.clock, streams.center, streams.firstFrames, streams.secondFrames)
        streams.first.cancel()
        #expect(center.watchedCount == 1)
        #expect(center.currentEvent(for: "t#1") == .finished)  // forgotten, not kept for nobody
        clock.advance(by: .seconds(5))
        #expect(leaving.frames.count == 2 && leaving.finished == 0)
        #expect(staying.finished == 1)
        #expect(center.watchedCount == 0 && clock.pendingWakeUps == 0)
    }

    @Test func aDeadlineAlreadyPastSaysDoneAtOnce() {
        let clock = VirtualClock()
        let center = CountdownCenter(clock: clock, scheduler: clock)
        let recorder = Recorder()
        let source = Self.source(center, "t#1", remaining: .zero, recorder)
        source.start()
        #expect(recorder.frames == [String(decoding: CountdownEventSource.done, as: UTF8.self)])
        #expect(recorder.finished == 1 && source.isOver)
        #expect(clock.pendingWakeUps == 0)
    }

    @Test(arguments: [
        (Int64(60), Duration.milliseconds(60_000), 60_000),
        (60, .nanoseconds(59_000_000_001), 59_001),
        (42, .milliseconds(41_500), 41_500),
        (1, .nanoseconds(1), 1),
        (2, .milliseconds(2_004), 2_000),  // a late tick never contradicts its seconds
        (2, .milliseconds(900), 1_001),
    ])
    func tickMillisecondsAgreeWithTheSecondsShown(seconds: Int64, remaining: Duration, milliseconds: Int) {
        let frame = String(decoding: CountdownEventSource.tick(CountdownValue(totalSeconds: seconds), remaining: remaining), as: UTF8.self)
        #expect(frame == "event: tick\ndata: {\"retry_after\": \(seconds), \"retry_after_ms\": \(milliseconds)}\n\n")
    }
}
