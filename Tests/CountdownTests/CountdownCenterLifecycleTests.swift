import Countdown
import Foundation
import Testing

@Suite struct CountdownCenterLifecycleTests {
    @Test func completionFiresOnceForEachWatcher() {
        let (center, clock) = makeVirtualCenter()
        center.start("a", remaining: .milliseconds(1_500))
        let first = EventRecorder(), second = EventRecorder()
        let tokens = [first.subscribe(center, to: "a"), second.subscribe(center, to: "a")]
        clock.advance(by: .seconds(5))
        clock.advance(by: .seconds(5))
        #expect(first.seconds == [2, 1, -1])
        #expect(second.seconds == [2, 1, -1])
        #expect(tokens.map(\.isActive) == [false, false])
    }

    @Test func deadlinePassedWhileUnobservedGivesFinishedOnceOnSubscribe() {
        let (center, clock) = makeVirtualCenter()
        center.start("a", remaining: .seconds(5))
        let early = EventRecorder()
        early.subscribe(center, to: "a").cancel()
        clock.advance(by: .seconds(8))
        let late = EventRecorder()
        let token = late.subscribe(center, to: "a")
        clock.advance(by: .seconds(8))
        #expect(early.seconds == [5])
        #expect(late.seconds == [-1])
        #expect(center.currentEvent(for: "a") == .finished)
        #expect(center.isTicking == false)
        withExtendedLifetime(token) {}
    }

    @Test func extendAddsTimeAndCancelFinishesAtOnce() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(10))
        let recorder = EventRecorder()
        let token = recorder.subscribe(center, to: "a")
        clock.advance(by: .seconds(1))
        center.extend("a", by: .seconds(30))
        #expect(recorder.seconds == [10, 9, 39])
        center.cancel("a")
        #expect(recorder.seconds == [10, 9, 39, -1])
        #expect(center.state(of: "a") == nil)
        #expect(center.isTicking == false)
        withExtendedLifetime(token) {}
    }

    @Test func startFromServerReplyUsesTheInstantItArrived() {
        let (center, clock) = makeVirtualCenter()
        let arrived = clock.now
        clock.advance(by: .milliseconds(300))
        center.start("a", remaining: .milliseconds(60_000), measuredAt: arrived)
        #expect(center.currentEvent(for: "a") == .value(CountdownValue(totalSeconds: 60)))
        clock.advance(by: .milliseconds(700))
        #expect(center.currentEvent(for: "a") == .value(CountdownValue(totalSeconds: 59)))
    }

    @Test func savedStateRestoresInANewProcessAndKeepsRunningDown() throws {
        let (center, clock) = makeVirtualCenter()
        center.start("login:+8613800138000", remaining: .seconds(60))
        clock.advance(by: .seconds(18))
        let saved = try #require(center.state(of: "login:+8613800138000"))
        let data = try JSONEncoder().encode([saved])
        #expect(center.states() == [saved])

        // "Killed and relaunched" 12 s later: a new clock with another monotonic origin.
        let relaunched = VirtualClock(now: CountdownInstant(nanoseconds: 987_654_321),
                                      wallNow: clock.wallNow.addingTimeInterval(12))
        let newCenter = CountdownCenter(clock: relaunched, scheduler: relaunched)
        for state in try JSONDecoder().decode([CountdownState].self, from: data) { newCenter.restore(state) }
        let recorder = EventRecorder()
        let token = recorder.subscribe(newCenter, to: "login:+8613800138000")
        #expect(saved == CountdownState(id: "login:+8613800138000", deadline: Date(timeIntervalSince1970: 1_700_000_060)))
        #expect(recorder.seconds == [30])
        relaunched.advance(by: .seconds(31))
        #expect(recorder.seconds.suffix(2) == [1, -1])
        withExtendedLifetime(token) {}
    }

    @Test func restoringAnExpiredStateFinishes() {
        let (center, _) = makeVirtualCenter()
        center.restore(CountdownState(id: "a", deadline: Date(timeIntervalSince1970: 1_699_999_999)))
        #expect(center.currentEvent(for: "a") == .finished)
        #expect(center.states() == [])
    }

    @Test func wallClockDeadlineIsConvertedOnce() throws {
        let (center, clock) = makeVirtualCenter()
        let deadline = try CountdownDeadline.parse("1700000042", timeZone: TimeZone(identifier: "UTC")!)
        center.start("a", wallClockDeadline: deadline)
        clock.setWallClock(Date(timeIntervalSince1970: 1_800_000_000))
        #expect(center.currentEvent(for: "a") == .value(CountdownValue(totalSeconds: 42)))
        #expect(center.currentEvent(for: "a").formattedForTest == "42秒后重新发送")
    }
}

extension CountdownEvent {
    fileprivate var formattedForTest: String {
        switch self {
        case .value(let value): value.resendPrompt(strings: .chinese)
        case .finished: "done"
        }
    }
}
