import Countdown
import Foundation
import ResendGateClient
import Testing

extension StubBackEndSuites {
    /// Issue 25: the model under the races an app meets: the phone changed while a send or a
    /// refresh is under way, a late answer, a retried tap, a cancelled task, a release on the
    /// back end. Against `StubBackEnd`, which holds an answer until the test lets it go.
    @MainActor @Suite(.serialized) struct ResendButtonModelRaceTests {
        static let first = "+8613800138000", second = "+8613800138001"

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        func makeButton(store: MemoryStore = MemoryStore(), clock: VirtualClock = VirtualClock()) -> ResendButtonModel {
            let center = CountdownCenter(clock: clock, scheduler: clock, tolerance: .zero)
            return ResendButtonModel(client: StubBackEnd.makeClient(clock: clock), phone: Self.first, purpose: "login", store: store, center: center)
        }

        @Test func changingThePhoneStartsAfreshAndChangingBackRestores() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { _ in StubBackEnd.allowed(seconds: 60, token: "T1") }
            let store = MemoryStore()
            let button = makeButton(store: store)
            await button.send()
            #expect(button.state == .counting(seconds: 60))
            let firstKey = button.storageKey
            button.phone = Self.second
            #expect(button.state == .idle && button.isEnabled && button.storageKey != firstKey)
            #expect(store.data[button.storageKey] == nil && store.data[firstKey] != nil)
            // Another spelling of the first number is the first number.
            button.phone = "+86 138 0013 8000"
            #expect(button.storageKey == firstKey && button.state == .counting(seconds: 60))
        }

        /// A refresh's answer that comes after the phone changed is dropped (before, it
        /// restarted the old number's countdown on the new number's button; a 404 ended it).
        @Test func aLateRefreshAnswerLosesToANewerChange() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            for late in [StubBackEnd.countdown(seconds: 30), StubBackEnd.notFound] {
                StubBackEnd.reset()
                StubBackEnd.answer = { request in
                    request.path.hasPrefix("/v1/countdowns") ? late : StubBackEnd.allowed(seconds: 60, token: "T1")
                }
                let button = makeButton()
                await button.send()
                StubBackEnd.hold("/v1/countdowns")
                let refreshing = Task { await button.refresh() }
                await StubBackEnd.waitForRequests(2)
                button.phone = Self.second
                StubBackEnd.release("/v1/countdowns")
                await refreshing.value
                #expect(button.state == .idle, "\(late)")
            }
        }

        /// One tap is one `Idempotency-Key`: the kit's own retries of a send that got no answer
        /// reuse it, so a send the server did decide is not sent twice; the next tap has its own.
        @Test func retriesOfOneTapReuseItsKeyAndTheNextTapHasItsOwn() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            let attempts = AttemptCounter()
            StubBackEnd.answer = { _ in attempts.next() < 2 ? .dropped : StubBackEnd.allowed(seconds: 60, token: "T1") }
            let button = makeButton()
            await button.send()
            #expect(button.state == .counting(seconds: 60) && button.lastError == nil)
            let keys = StubBackEnd.recorded.map(\.idempotencyKey)
            #expect(keys.count == 3 && Set(keys).count == 1 && keys[0] != nil, "\(keys)")
            button.phone = Self.second
            await button.send()
            let next = StubBackEnd.recorded.last?.idempotencyKey
            #expect(next != nil && next != keys[0])
        }

        /// A send whose task is cancelled goes back where it was, with no error to show.
        @Test func aCancelledSendIsNotAnError() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { _ in StubBackEnd.allowed(seconds: 60, token: "T1") }
            StubBackEnd.hold("/v1/sends")
            let button = makeButton()
            let sending = Task { await button.send() }
            await StubBackEnd.waitForRequests(1)
            #expect(button.state == .sending)
            // The held answer is never let go: the cancelled task must end without it.
            sending.cancel()
            await sending.value
            #expect(button.state == .idle && button.lastError == nil, "\(button.state) \(String(describing: button.lastError))")
        }

        @Test func longWaitsReadByTheirSize() {
            let english = CountdownStrings.english, chinese = CountdownStrings.chinese
            #expect(CountdownValue(totalSeconds: 42).resendPrompt(.bySize, strings: english) == "Resend in 42s")
            #expect(CountdownValue(totalSeconds: 900).resendPrompt(.bySize, strings: english) == "Resend in 15:00")
            #expect(CountdownValue(totalSeconds: 3_599).resendPrompt(.bySize, strings: english) == "Resend in 59:59")
            #expect(CountdownValue(totalSeconds: 3_723).resendPrompt(.bySize, strings: english) == "Resend in 1:02:03")
            #expect(CountdownValue(totalSeconds: 93_600).resendPrompt(.bySize, strings: english) == "Resend in 26:00:00")
            #expect(CountdownValue(totalSeconds: 42).resendPrompt(.bySize, strings: chinese) == "42秒后重新发送")
            #expect(CountdownValue(totalSeconds: 900).resendPrompt(.bySize, strings: chinese) == "15:00后重新发送")
        }
    }
}

/// Counts a stub's answers across its threads.
final class AttemptCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    /// The count before this call.
    func next() -> Int {
        lock.withLock {
            defer { value += 1 }
            return value
        }
    }
}
