import Countdown
import Foundation
import Testing

/// Where and when handlers run: never under the center's lock, the first value on the
/// subscriber's queue, main-actor handlers, and subscriptions owned by an object.
@Suite struct CountdownDeliveryRulesTests {
    /// A handler that synchronously hops to a "main" queue, while that queue calls into the
    /// center: had the first value been delivered with the center's lock held, the hop and
    /// the call would wait for each other forever.
    @Test func handlerThatSyncsToAnotherQueueDoesNotDeadlock() {
        let (center, _) = makeVirtualCenter()
        center.start("a", remaining: .seconds(30))
        let main = DispatchQueue(label: "test.countdown.main-like")
        let handlerRunning = DispatchSemaphore(value: 0)
        let mainCalledIn = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let recorder = EventRecorder()
        main.async {
            handlerRunning.wait()
            center.start("b", remaining: .seconds(5))  // needs the center's lock
            mainCalledIn.signal()
        }
        let subscriber = Thread {
            let token = center.subscribe(to: "a") { event in
                handlerRunning.signal()
                main.sync { recorder.record(event) }
            }
            token.cancel()
            finished.signal()
        }
        subscriber.start()
        #expect(waitPatiently(finished) == .success)
        #expect(waitPatiently(mainCalledIn) == .success)
        #expect(recorder.seconds == [30])
    }

    /// The first value goes to the named queue: it never runs on the caller's thread.
    @Test func firstValueIsNeverDeliveredOnTheCallersThread() {
        let (center, _) = makeVirtualCenter()
        center.start("a", remaining: .seconds(9))
        let queue = DispatchQueue(label: "test.countdown.named")
        let caller = Thread.current
        let threads = ThreadRecorder()
        let token = center.subscribe(to: "a", on: queue) { _ in threads.record(Thread.current) }
        queue.sync {}
        #expect(threads.count == 1)
        #expect(threads.contains(caller) == false)
        withExtendedLifetime(token) {}
    }

    /// A `@MainActor` closure is a handler as it is: no `assumeIsolated` in the caller.
    @MainActor @Test func mainActorHandlersGetEveryEventOnTheMainActor() async {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(2))
        let label = MainActorLabel()
        let token = center.subscribeOnMainActor(to: "a") { event in label.show(event) }
        // The first value before subscribeOnMainActor returns (it used to come a turn late:
        // a reused cell flashed its old value); the rest through the main queue.
        #expect(label.texts == ["Resend in 2s"])
        clock.advance(by: .seconds(2))
        await label.waitFor(count: 3)
        #expect(label.texts == ["Resend in 2s", "Resend in 1s", "done"])
        withExtendedLifetime(token) {}
    }

    @Test func ownedSubscriptionEndsWithItsOwnerAndKeepsNoCycle() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(10))
        let recorder = EventRecorder()
        weak var weakOwner: Cell?
        do {
            let cell = Cell()
            weakOwner = cell
            // The token is dropped at once: the owner, not the token, bounds the subscription.
            center.subscribe(to: "a", owner: cell) { cell, event in
                cell.shown += 1
                recorder.record(event)
            }
            clock.advance(by: .seconds(2))
            #expect(cell.shown == 3)
        }
        #expect(weakOwner == nil)  // the center held no strong reference to the cell
        #expect(center.watchedCount == 1)
        clock.advance(by: .seconds(1))  // the next change finds the owner gone
        #expect(center.watchedCount == 0)
        #expect(center.isTicking == false)
        clock.advance(by: .seconds(10))
        #expect(recorder.seconds == [10, 9, 8])
    }

    @Test func ownedSubscriptionMayStillBeCancelledEarly() {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("a", remaining: .seconds(10))
        let cell = Cell()
        let token = center.subscribe(to: "a", owner: cell) { cell, _ in cell.shown += 1 }
        token.cancel()
        clock.advance(by: .seconds(3))
        #expect(cell.shown == 1)
        #expect(center.watchedCount == 0)
    }

    /// Threads subscribe, cancel and restart countdowns while another advances time: run
    /// under ThreadSanitizer by deploy/test-tsan. Each subscription sees its values in
    /// strictly falling order, then at most one `finished`, and nothing after it.
    @Test func concurrentSubscribersSeeOrderedEventsWhileTimeMoves() async {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        for index in 0..<8 { center.start(CountdownID("c\(index)"), remaining: .seconds(Int64(5 + index))) }
        let queue = DispatchQueue(label: "test.countdown.shared")
        let recorders = (0..<64).map { _ in EventRecorder() }
        let tokens = TokenBag()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for _ in 0..<40 { clock.advance(by: .milliseconds(250)) }
            }
            for (index, recorder) in recorders.enumerated() {
                group.addTask {
                    let id = CountdownID("c\(index % 8)")
                    let token = recorder.subscribe(center, to: id, on: index.isMultiple(of: 2) ? queue : nil)
                    if index.isMultiple(of: 3) { center.extend(id, by: .seconds(1)) }
                    if index.isMultiple(of: 5) { token.cancel() } else { tokens.keep(token) }
                }
            }
        }
        clock.advance(by: .seconds(30))
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        for (index, recorder) in recorders.enumerated() {
            let seconds = recorder.seconds
            // A cancelled subscription may lose its first value if it was still queued.
            #expect(!seconds.isEmpty || index.isMultiple(of: 5))
            let values = seconds.filter { $0 >= 0 }
            #expect(seconds.filter { $0 < 0 }.count <= 1)
            #expect(seconds.last == -1 || !seconds.contains(-1))
            // Falling, except where an `extend` raised it.
            #expect(zip(values, values.dropFirst()).filter { $0.1 >= $0.0 }.count <= 8)
        }
        #expect(center.isTicking == false)
        // Every subscription kept to the end saw its countdown finish, once.
        for (index, recorder) in recorders.enumerated() where !index.isMultiple(of: 5) {
            #expect(recorder.seconds.last == -1, "subscriber \(index): \(recorder.seconds)")
        }
        withExtendedLifetime(tokens) {}
    }
}

private final class TokenBag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var tokens: [CountdownSubscription] = []

    var count: Int { lock.withLock { tokens.count } }

    func keep(_ token: CountdownSubscription) { lock.withLock { tokens.append(token) } }
}

/// A stand-in for a list cell or view controller.
private final class Cell: @unchecked Sendable {
    // @unchecked: touched only from the thread that advances the virtual clock.
    var shown = 0
}

@MainActor private final class MainActorLabel {
    private(set) var texts: [String] = []

    func show(_ event: CountdownEvent) {
        switch event {
        case .value(let value): texts.append(value.resendPrompt())
        case .finished: texts.append("done")
        }
    }

    /// Waits until `count` texts were shown, at most 5 s (a regression fails, never hangs).
    func waitFor(count: Int) async {
        let deadline = ContinuousClock.now + .seconds(5)
        while texts.count < count && ContinuousClock.now < deadline { await Task.yield() }
    }
}

private final class ThreadRecorder: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var threads: [Thread] = []

    var count: Int { lock.withLock { threads.count } }

    func record(_ thread: Thread) { lock.withLock { threads.append(thread) } }

    func contains(_ thread: Thread) -> Bool { lock.withLock { threads.contains { $0 === thread } } }
}

/// Waits for `semaphore` for 10 s of this process's running time, in 10 ms slices: a
/// process frozen past a single 10 s timeout (CI froze test processes for up to 15 s) woke
/// the waiter timed out before the signalling thread ran again; a freeze costs a slice here.
private func waitPatiently(_ semaphore: DispatchSemaphore, slices: Int = 1_000) -> DispatchTimeoutResult {
    for _ in 0..<slices where semaphore.wait(timeout: .now() + .milliseconds(10)) == .success { return .success }
    return .timedOut
}
