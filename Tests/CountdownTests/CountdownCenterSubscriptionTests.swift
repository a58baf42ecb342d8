import Countdown
import Foundation
import Testing

@Suite struct CountdownCenterSubscriptionTests {
    @Test func resubscribingToTheSameIdContinuesTheCountdown() {
        let (center, clock) = makeVirtualCenter()
        center.start("cell", remaining: .seconds(60))
        let first = EventRecorder()
        let firstToken = first.subscribe(center, to: "cell")
        clock.advance(by: .seconds(5))
        firstToken.cancel()
        clock.advance(by: .seconds(10))
        let reused = EventRecorder()
        let reusedToken = reused.subscribe(center, to: "cell")
        #expect(first.seconds == [60, 59, 58, 57, 56, 55])
        #expect(reused.seconds == [45])
        withExtendedLifetime(reusedToken) {}
    }

    @Test func cancellingOneTokenLeavesTheOthers() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(3))
        center.start("b", remaining: .seconds(2))
        let sameA = EventRecorder(), otherA = EventRecorder(), onB = EventRecorder()
        let sameToken = sameA.subscribe(center, to: "a")
        let otherToken = otherA.subscribe(center, to: "a")
        let bToken = onB.subscribe(center, to: "b")
        sameToken.cancel()
        sameToken.cancel()
        clock.advance(by: .seconds(3))
        #expect(sameA.seconds == [3])
        #expect(otherA.seconds == [3, 2, 1, -1])
        #expect(onB.seconds == [2, 1, -1])
        #expect(sameToken.isActive == false)
        withExtendedLifetime((otherToken, bToken)) {}
    }

    @Test func releasingTheTokenCancelsAndReleasesTheSubscriber() {
        let (center, clock) = makeVirtualCenter()
        center.start("a", remaining: .seconds(10))
        final class Subscriber: Sendable {}
        weak var weakSubscriber: Subscriber?
        do {
            let subscriber = Subscriber()
            weakSubscriber = subscriber
            let token = center.subscribe(to: "a") { _ in withExtendedLifetime(subscriber) {} }
            #expect(weakSubscriber != nil)
            token.cancel()
        }
        #expect(weakSubscriber == nil)
        #expect(center.isTicking == false)
        do {
            _ = center.subscribe(to: "a") { _ in }
        }
        #expect(center.watchedCount == 0)
        clock.advance(by: .seconds(1))
    }

    @Test func deliversOnTheQueueTheCallerChose() async {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        let queue = DispatchQueue(label: "test.countdown.delivery")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        center.start("a", remaining: .seconds(2))
        let onQueue = EventRecorder()
        let token = center.subscribe(to: "a", on: queue) { event in
            onQueue.record(DispatchQueue.getSpecific(key: key) == true ? event : .value(CountdownValue(totalSeconds: 999)))
        }
        clock.advance(by: .seconds(2))
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        // Every event, the first included, ran on the queue (999 would mark another thread).
        #expect(onQueue.seconds == [2, 1, -1])
        withExtendedLifetime(token) {}
    }

    @Test func handlerMayCallBackIntoTheCenter() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(2))
        let recorder = EventRecorder()
        let token = center.subscribe(to: "a") { event in
            recorder.record(event)
            // Extend once, from inside the first "1".
            if recorder.seconds == [2, 1] { center.extend("a", by: .seconds(5)) }
        }
        clock.advance(by: .seconds(10))
        #expect(recorder.seconds == [2, 1, 6, 5, 4, 3, 2, 1, -1])
        withExtendedLifetime(token) {}
    }
}
