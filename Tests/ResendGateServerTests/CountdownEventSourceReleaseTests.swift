import Countdown
import Testing
@testable import ResendGateServer

/// A release ending a stream early, in virtual time.
@Suite("CountdownEventSource: ended early by a release")
struct CountdownEventSourceReleaseTests {
    typealias Recorder = CountdownEventSourceTests.Recorder

    @Test func aReleaseSaysDoneWithItsReasonOnceAndStopsTheTicker() {
        let clock = VirtualClock()
        let center = CountdownCenter(clock: clock, scheduler: clock)
        let released = Recorder()
        let other = Recorder()
        let source = CountdownEventSourceTests.source(center, "t#1", remaining: .seconds(60), released)
        let bystander = CountdownEventSourceTests.source(center, "u#2", remaining: .seconds(3), other)
        source.start()
        bystander.start()
        clock.advance(by: .seconds(1))
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
