import Countdown
import Foundation
import Testing

@Suite struct CountdownCenterTickingTests {
    @Test func firstValueIsDeliveredBeforeSubscribeReturns() {
        let (center, _) = makeVirtualCenter()
        center.start("a", remaining: .milliseconds(59_001))
        let recorder = EventRecorder()
        let token = recorder.subscribe(center, to: "a")
        #expect(recorder.events == [.value(CountdownValue(totalSeconds: 60))])
        withExtendedLifetime(token) {}
    }

    @Test func emitsEachSecondOnceThenFinishedWithoutShowingZero() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .milliseconds(3_500))
        let recorder = EventRecorder()
        let token = recorder.subscribe(center, to: "a")
        clock.advance(by: .milliseconds(499))
        #expect(recorder.seconds == [4])
        clock.advance(by: .milliseconds(1))
        #expect(recorder.seconds == [4, 3])
        clock.advance(by: .milliseconds(2_999))
        #expect(recorder.seconds == [4, 3, 2, 1])
        clock.advance(by: .milliseconds(1))
        #expect(recorder.seconds == [4, 3, 2, 1, -1])
        clock.advance(by: .seconds(10))
        #expect(recorder.seconds == [4, 3, 2, 1, -1])
        #expect(clock.firedWakeUps == 4)
        withExtendedLifetime(token) {}
    }

    /// 10 000 countdowns with seeded random deadlines over 1–120 s, time advanced in uneven
    /// steps: each shows every whole second from its first value down to 1 exactly once,
    /// then `finished` once, and the ticker wakes per coalesced change, not per countdown.
    @Test func tenThousandCountdownsEmitExactlyOncePerDisplayedChange() {
        let (center, clock) = makeVirtualCenter(tolerance: .milliseconds(50))
        var generator = SplitMix64(seed: 42)
        var firstValues: [Int64] = []
        var recorders: [EventRecorder] = []
        var tokens: [CountdownSubscription] = []
        for index in 0..<10_000 {
            let milliseconds = Int64.random(in: 1...120_000, using: &generator)
            let id = CountdownID("c\(index)")
            center.start(id, remaining: .milliseconds(milliseconds))
            firstValues.append(CountdownValue(remainingMilliseconds: milliseconds).totalSeconds)
            let recorder = EventRecorder()
            tokens.append(recorder.subscribe(center, to: id))
            recorders.append(recorder)
        }
        var elapsed: Int64 = 0
        while elapsed < 125_000 {
            let step = Int64.random(in: 1...700, using: &generator)
            clock.advance(by: .milliseconds(step))
            elapsed += step
        }
        for (recorder, first) in zip(recorders, firstValues) {
            #expect(recorder.seconds == Array(stride(from: first, through: 1, by: -1)) + [-1])
        }
        // 120 s of coalesced wake-ups at most 50 ms apart, against 600 000 value changes.
        #expect(clock.firedWakeUps <= 2_401)
        #expect(center.isTicking == false)
        #expect(clock.pendingWakeUps == 0)
        withExtendedLifetime(tokens) {}
    }

    @Test func timerStopsWhenNothingIsSubscribed() {
        let (center, clock) = makeVirtualCenter()
        center.start("a", remaining: .seconds(30))
        center.start("b", remaining: .seconds(40))
        #expect(center.isTicking == false)
        #expect(clock.pendingWakeUps == 0)
        let first = center.subscribe(to: "a") { _ in }
        let second = center.subscribe(to: "b") { _ in }
        #expect(center.isTicking == true)
        #expect(clock.pendingWakeUps == 1)
        first.cancel()
        #expect(center.isTicking == true)
        second.cancel()
        #expect(center.isTicking == false)
        #expect(clock.pendingWakeUps == 0)
        let firedBefore = clock.firedWakeUps
        clock.advance(by: .seconds(60))
        #expect(clock.firedWakeUps == firedBefore)
    }

    @Test func wallClockJumpChangesNothing() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(60))
        let recorder = EventRecorder()
        let token = recorder.subscribe(center, to: "a")
        let savedBefore = center.state(of: "a")
        clock.setWallClock(clock.wallNow.addingTimeInterval(3_600))
        clock.setWallClock(clock.wallNow.addingTimeInterval(-7_200))
        clock.advance(by: .seconds(1))
        #expect(recorder.seconds == [60, 59])
        #expect(center.currentEvent(for: "a") == .value(CountdownValue(totalSeconds: 59)))
        // The saved wall deadline follows the new wall clock: still 59 s from "now".
        #expect(center.state(of: "a")?.deadline == clock.wallNow.addingTimeInterval(59))
        #expect(savedBefore?.deadline == Date(timeIntervalSince1970: 1_700_000_060))
        withExtendedLifetime(token) {}
    }
}
