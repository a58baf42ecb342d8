import Countdown
import Foundation
import ResendGateClient
import ResendGateTestSupport
import Testing

/// The button's states against a real server, with time moved by a virtual clock.
@MainActor @Suite(.serialized) struct ResendButtonModelTests {
    static let phone = "+8613800138000"

    @Test func sendCountsDownToReadyOnVirtualTime() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let clock = VirtualClock()
            let store = MemoryStore()
            let (button, changes) = makeButton(gate, clock: clock, store: store)
            #expect(button.state == .idle && button.title == "Send code" && button.isEnabled)
            await button.send()
            #expect(button.state == .counting(seconds: 60))
            #expect(button.title == "Resend in 1:00" && !button.isEnabled)
            // The state as it was when onChange was set, then the send's.
            #expect(changes.states.prefix(3) == [.idle, .sending, .counting(seconds: 60)])
            #expect(store.data[button.storageKey] != nil)

            clock.advance(by: .seconds(1))
            await drainMainQueue()
            #expect(button.state == .counting(seconds: 59))
            button.strings = .chinese
            #expect(button.title == "59秒后重新发送")
            clock.advance(by: .seconds(59))
            await drainMainQueue()
            #expect(button.state == .ready && button.title == "重新发送" && button.isEnabled)
            #expect(changes.states.filter { $0 == .ready }.count == 1)
            #expect(store.data[button.storageKey] == nil)
        }
    }

    @Test func refusalIsShownWithItsReasonAndCountsDown() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let clock = VirtualClock()
            let started = ContinuousClock.now
            _ = try await gate.client().send(phone: Self.phone, purpose: "login")
            let (button, _) = makeButton(gate, clock: clock, store: MemoryStore())
            await button.send()
            let elapsed = (ContinuousClock.now - started).components.seconds
            #expect(button.refusal == .cooldown)
            guard case .counting(let seconds) = button.state else {
                Issue.record("not counting: \(button.state)")
                return
            }
            // What the first send's cooldown has left: 60 s less the time this took (a
            // second or more on a loaded machine), never more than 60.
            #expect((59 - elapsed...60).contains(seconds), "\(seconds) s left after \(elapsed) s")
        }
    }

    @Test func failedSendGoesBackWithTheError() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let (button, _) = makeButton(gate, clock: VirtualClock(), store: MemoryStore(), phone: "+86 999")
            await button.send()
            #expect(button.state == .idle && button.lastError?.code == "invalid_phone")
        }
    }

    /// Killed and relaunched 20 s later with the device clock 5 minutes fast all along:
    /// the restored countdown is the server's, not 5 minutes off.
    @Test func restoresAfterRelaunchWithASkewedDeviceClock() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let fast = Date().addingTimeInterval(300)
            let store = MemoryStore()
            let first = VirtualClock(now: CountdownInstant(nanoseconds: 5_000_000_000), wallNow: fast)
            let (button, _) = makeButton(gate, clock: first, store: store)
            await button.send()
            #expect(button.state == .counting(seconds: 60))

            let relaunched = VirtualClock(now: CountdownInstant(nanoseconds: 777), wallNow: fast.addingTimeInterval(20))
            let (restored, _) = makeButton(gate, clock: relaunched, store: store)
            #expect(restored.state == .counting(seconds: 40))
            // The same saved state read naively (device clock against resend_at) would be
            // 5 minutes over already.
            let saved = try JSONDecoder().decode(SavedCountdown.self, from: try #require(store.data[restored.storageKey]))
            #expect(saved.resendAt < relaunched.wallNow)
            relaunched.advance(by: .milliseconds(39_000))
            await drainMainQueue()
            #expect(restored.state == .counting(seconds: 1))
            relaunched.advance(by: .milliseconds(1_000))
            await drainMainQueue()
            #expect(restored.state == .ready)
        }
    }

    @Test func restoreAfterTheDeadlineIsReadyOnce() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let store = MemoryStore()
            let (button, _) = makeButton(gate, clock: VirtualClock(), store: store)
            await button.send()
            let later = VirtualClock(wallNow: VirtualClock().wallNow.addingTimeInterval(61))
            let (restored, changes) = makeButton(gate, clock: later, store: store)
            #expect(restored.state == .ready)
            // Ready while being made: onChange, set afterwards, hears it at once (a label
            // wired after init used to miss the restored state)...
            #expect(changes.states == [.ready])
            // ...and the countdown it restored, already over, sends nothing more.
            later.advance(by: .seconds(5))
            await drainMainQueue()
            #expect(changes.states == [.ready])
            #expect(store.data[restored.storageKey] == nil)
            let (again, _) = makeButton(gate, clock: later, store: store)
            #expect(again.state == .idle)
        }
    }

    /// Back in the foreground: the server's answer wins (here, a release ended the cooldown).
    @Test func refreshFollowsTheServer() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let clock = VirtualClock()
            let (button, _) = makeButton(gate, clock: clock, store: MemoryStore())
            let started = ContinuousClock.now
            await button.send()
            await button.refresh()
            // The server's 60 s cooldown less the real time since the send (the virtual
            // clock stands still): 60 or 59, less a second for each second this took (a
            // process frozen between the two calls).
            let elapsed = (ContinuousClock.now - started).components.seconds
            guard case .counting(let seconds) = button.state else {
                Issue.record("not counting after a refresh: \(button.state)")
                return
            }
            #expect((59 - elapsed...60).contains(seconds), "\(seconds) s left after \(elapsed) s")
            try await gate.client().release(phone: Self.phone, purpose: "login")
            await button.refresh()
            #expect(button.state == .ready && button.lastError == nil)
        }
    }

    /// Issue 25: a release on the back end (the SMS provider failed) used to reach the
    /// button only on a manual refresh; a visible button follows the countdown's stream.
    @Test func aReleaseOnTheBackEndReachesAVisibleButton() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
        try await withLiveGate(cooldown: "60s") { gate in
            let (button, _) = makeButton(gate, clock: VirtualClock(), store: MemoryStore())
            await button.send()
            button.startLiveUpdates()
            defer { button.stopLiveUpdates() }
            #expect(button.state == .counting(seconds: 60))
            try await gate.client().release(phone: Self.phone, purpose: "login")
            // Waits for the server's event (at most 5 s this process ran: a frozen process
            // read nothing meanwhile), not for time to pass on the countdown.
            let deadline = PatientDeadline(.seconds(5))
            while button.state != .ready && deadline.hasTimeLeft { try await Task.sleep(for: .milliseconds(10)) }
            #expect(button.state == .ready, "still \(button.state) \(ContinuousClock.now - deadline.start) after the release")
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    private func makeButton(_ gate: LiveGate, clock: VirtualClock, store: MemoryStore,
                            phone: String = phone) -> (ResendButtonModel, ChangeLog) {
        let center = CountdownCenter(clock: clock, scheduler: clock, tolerance: .zero)
        let button = ResendButtonModel(client: gate.client(clock: clock), phone: phone, purpose: "login",
                                       store: store, center: center)
        let changes = ChangeLog()
        button.onChange = { changes.states.append($0.state) }
        return (button, changes)
    }
}

/// Lets events the center dispatched to the main queue run.
@MainActor func drainMainQueue() async {
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor final class ChangeLog {
    var states: [ResendButtonModel.State] = []
}

final class MemoryStore: ResendStateStore {
    var data: [String: Data] = [:]

    func savedData(forKey key: String) -> Data? { data[key] }

    func save(_ data: Data?, forKey key: String) { self.data[key] = data }
}
