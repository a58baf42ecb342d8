import Countdown
import Testing
@testable import ResendGateServer

/// A release ending a stream early, in virtual time.
@Suite("CountdownEventSource: ended early by a release")
struct CountdownEventSourceReleaseTests {
    @Test func aReleaseSaysDoneWithItsReasonOnceAndStopsTheTicker() {
        let streams = CountdownEventSourceTests.TwoStreams("t#1", .seconds(60), "u#2", .seconds(3))
        let (clock, center, source, released, other) = (streams.clock, streams.center, streams.first, streams.firstFrames, streams.secondFrames)
        source.end(reason: "released")
        let done = "event: done\ndata: {\"retry_after\": 0, \"retry_after_ms\": 0, \"reason\": \"released\"}\n\n"
        #expect(released.frames.count == 3 && released.frames.last == done)
        #expect(released.finished == 1 && source.isOver)
        #expect(center.currentEvent(for: "t#1") == .finished)  // forgotten
        // Once over, nothing more: not a second done, not a tick, not a cancel's.
        source.end(reason: "released")
        source.cancel()
        clock.advance(by: .seconds(70))
        #expect(released.frames.count == 3 && released.finished == 1)
        // The other stream ran to its own deadline, with the plain done.
        #expect(other.finished == 1)
        #expect(other.frames.last == String(decoding: CountdownEventSource.done, as: UTF8.self))
        #expect(center.watchedCount == 0 && clock.pendingWakeUps == 0)
    }
}
