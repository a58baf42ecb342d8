import Countdown
import Foundation
@testable import ResendGateClient
import ResendGateTestSupport
import Testing

extension StubBackEndSuites {
    /// Issue 37: the model's lifetime in the shared center, SwiftUI's `.task` idiom, retries,
    /// the public deadline, and what VoiceOver and a Chinese user read.
    @MainActor @Suite(.serialized) struct KitModelTests {
        static let phone = "+8613800138000", other = "+8613800138001"

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        func makeButton(clock: VirtualClock = VirtualClock()) -> ResendButtonModel {
            let center = CountdownCenter(clock: clock, scheduler: clock, tolerance: .zero)
            return ResendButtonModel(client: StubBackEnd.makeClient(clock: clock), phone: Self.phone, purpose: "login",
                                     store: MemoryStore(), center: center)
        }

        /// Models on the system clock share `CountdownCenter.shared`; a freed one takes its
        /// countdown's record (it stayed there for the process's life) and its live task with it.
        @Test func aFreedModelLeavesNoRecordInTheSharedCenter() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { request in
                request.path.hasSuffix("/events") ? StubBackEnd.released : StubBackEnd.allowed(seconds: 600, token: "T1")
            }
            let before = CountdownCenter.shared.states().count
            var button: ResendButtonModel? = ResendButtonModel(
                client: StubBackEnd.makeClient(clock: SystemCountdownClock()), phone: Self.phone, purpose: "login", store: MemoryStore())
            await button?.send()
            #expect(CountdownCenter.shared.states().count == before + 1)
            StubBackEnd.hold("/v1/countdowns/T1/events")
            button?.startLiveUpdates()
            await StubBackEnd.waitForRequests(2)
            weak let freed = button
            button = nil
            #expect(freed == nil)
            #expect(CountdownCenter.shared.states().count == before)
            // ...and its live task ended with it: the stream's request is cancelled.
            let deadline = PatientDeadline(.seconds(5))
            while !StubBackEnd.stopped.contains("/v1/countdowns/T1/events") && deadline.hasTimeLeft {
                try? await Task.sleep(for: .milliseconds(5))
            }
            #expect(StubBackEnd.stopped.contains("/v1/countdowns/T1/events"), "the freed model's stream still runs")
            StubBackEnd.release("/v1/countdowns/T1/events")
        }

        /// `.task { await button.liveUpdates() }`: the stream is followed while the task runs and
        /// its request is cancelled when the task is (the view went away).
        @Test func liveUpdatesEndWithTheirTask() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { request in
                request.path.hasSuffix("/events") ? StubBackEnd.released : StubBackEnd.allowed(seconds: 60, token: "T1")
            }
            let button = makeButton()
            await button.send()
            StubBackEnd.hold("/v1/countdowns/T1/events")
            let live = Task { await button.liveUpdates() }
            await StubBackEnd.waitForRequests(2)
            live.cancel()
            await live.value
            // The request's end reaches the stub on the session's own queue: wait for it.
            let deadline = PatientDeadline(.seconds(5))
            while !StubBackEnd.stopped.contains("/v1/countdowns/T1/events") && deadline.hasTimeLeft {
                try? await Task.sleep(for: .milliseconds(5))
            }
            #expect(StubBackEnd.stopped.contains("/v1/countdowns/T1/events"))
            StubBackEnd.release("/v1/countdowns/T1/events")
            #expect(button.state == .counting(seconds: 60))
        }

        /// A send's answer that comes after the phone changed is dropped: the new number's
        /// button stays idle, and nothing is saved for it.
        @Test func aLateSendAnswerLosesToAPhoneChange() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { _ in StubBackEnd.allowed(seconds: 60, token: "T1") }
            StubBackEnd.hold("/v1/sends")
            let button = makeButton()
            let sending = Task { await button.send() }
            await StubBackEnd.waitForRequests(1)
            button.phone = Self.other
            StubBackEnd.release("/v1/sends")
            await sending.value
            #expect(button.state == .idle && button.countdown == nil && button.lastDecision == nil)
        }

        /// Retries of a send back off (0.5 s, then 1 s, with jitter), and never when retrying
        /// cannot help: offline, a refused number, a rate limit.
        @Test func sendRetriesBackOffAndSkipWhatRetryingCannotFix() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            let cases: [(StubBackEnd.Answer, Int)] = [
                (.dropped, 3), (StubBackEnd.error(503, "store_unavailable"), 3), (.raw(status: 502, headers: [:], ""), 3),
                (.failed(.notConnectedToInternet), 1), (StubBackEnd.error(400, "invalid_phone"), 1),
                (.raw(status: 429, headers: ["Retry-After": "60"], ""), 1), (StubBackEnd.error(401, "unauthorized"), 1),
            ]
            for (answer, requests) in cases {
                StubBackEnd.reset()
                StubBackEnd.answer = { _ in answer }
                let button = makeButton()
                let delays = DelayLog()
                button.sleepBeforeRetry = { delay in await delays.add(delay) }
                button.retryJitter = { 0 }
                await button.send()
                #expect(StubBackEnd.recorded.count == requests, "\(answer)")
                #expect(await delays.all == (requests == 3 ? [.milliseconds(500), .seconds(1)] : []), "\(answer)")
                #expect(button.state == .idle && button.lastError != nil)
            }
            #expect(ResendButtonModel.retryDelay(attempt: 1, jitter: 1) == .milliseconds(1_500))
        }

        /// The jitter the kit uses by default is random (a fixed one would bring clients a
        /// restart dropped back all at once).
        @Test func theJitterInUseIsRandom() {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            let client = StubBackEnd.makeClient(clock: VirtualClock())
            let button = makeButton()
            let reconnect = Set((0..<20).map { _ in client.reconnectJitter() })
            let retry = Set((0..<20).map { _ in button.retryJitter() })
            #expect(reconnect.count > 10 && retry.count > 10)
            #expect(reconnect.allSatisfy { (0..<1).contains($0) } && retry.allSatisfy { (0..<1).contains($0) })
        }

        /// The deadline is public on the server's time, and `countdownEnd` is that moment on the
        /// device's clock, whatever the device clock's offset (for `Text(timerInterval:)`).
        @Test func theDeadlineIsPublicOnTheServersTime() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { _ in StubBackEnd.allowed(seconds: 60, token: "T1") }
            let clock = VirtualClock(wallNow: Date().addingTimeInterval(300))  // the device 5 minutes fast
            let button = makeButton(clock: clock)
            #expect(button.countdownEnd == nil)
            await button.send()
            #expect(button.countdownEnd == clock.wallNow.addingTimeInterval(60))
            let resendAt = button.countdown?.resendAt.timeIntervalSinceNow ?? 0
            #expect((58...61).contains(resendAt), "resend_at is the server's: \(resendAt) s from now")
            clock.advance(by: .seconds(20))
            #expect(button.countdownEnd == clock.wallNow.addingTimeInterval(40))
        }

        @Test func voiceOverReadsWordsNotAClock() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            StubBackEnd.reset()
            StubBackEnd.answer = { _ in StubBackEnd.allowed(seconds: 65, token: "T1") }
            let clock = VirtualClock()
            let button = makeButton(clock: clock)
            #expect(button.accessibilityLabel == "Send code" && button.accessibilityValue == "")
            await button.send()
            #expect(button.title == "Resend in 1:05")
            #expect(button.accessibilityLabel == "Resend code" && button.accessibilityValue == "in 1 minute 5 seconds")
            clock.advance(by: .seconds(64))
            await drainMainQueue()
            #expect(button.accessibilityValue == "in 1 second")
            button.strings = .chinese
            #expect(button.accessibilityLabel == "重新发送验证码" && button.accessibilityValue == "1秒后可用")
            clock.advance(by: .seconds(1))
            await drainMainQueue()
            #expect(button.accessibilityLabel == "重新发送验证码" && button.accessibilityValue == "" && button.title == "重新发送")
        }

        @Test func stringsForALocaleWithPluralsAndItsDigits() {
            #expect(ResendButtonStrings.englishDuration(1) == "1 second" && ResendButtonStrings.englishDuration(42) == "42 seconds")
            #expect(ResendButtonStrings.englishDuration(3_660) == "1 hour 1 minute")
            #expect(ResendButtonStrings.chineseDuration(65) == "1分5秒")
            let chinese = ResendButtonStrings.localized(for: Locale(identifier: "zh-Hans-CN"))
            #expect(chinese.send == "获取验证码" && chinese.digits("42秒后重新发送") == "42秒后重新发送")
            #expect(ResendButtonStrings.localized(for: Locale(identifier: "en-GB")).send == "Send code")
            let arabic = ResendButtonStrings.localized(for: Locale(identifier: "ar-EG"))
            #expect(arabic.digits("Resend in 1:05") == "Resend in ١:٠٥")
        }
    }
}

/// Delays a test's sleep closure was asked for.
actor DelayLog {
    private(set) var all: [Duration] = []
    func add(_ delay: Duration) { all.append(delay) }
}
