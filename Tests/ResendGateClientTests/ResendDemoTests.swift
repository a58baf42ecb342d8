import Countdown
import Foundation
import ResendDemo
import ResendGateClient
import ResendGateTestSupport
import Testing

extension StubBackEndSuites {
    /// Issue 25: Examples/ResendDemo's logic against a real gate, as its screen would use it:
    /// a code sent, a wrong code, the right one, and a code tried past its lock.
    @MainActor @Suite(.serialized) struct ResendDemoTests {
        @Test func theDemoSignsInAndLocksAGuessedCode() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            try await withLiveGate(cooldown: "60s") { gate in
                let store = MemoryStore()
                let flow = SignInFlow(backEnd: gate.client(), checker: DemoCodeChecker(gate: gate.client()), store: store)
                flow.phoneChanged("+86 138 0013 8000")
                await flow.submit(code: "000000")
                #expect(flow.lastCheck == .noCode && flow.message == "Ask for a code first")
                await flow.sendTapped()
                #expect(flow.button.title == "Resend in 1:00" && !flow.button.isEnabled)
                await flow.submit(code: "000000")
                #expect(flow.lastCheck == .wrong(attemptsLeft: 4) && flow.message == "Wrong code: 4 more tries")
                await flow.submit(code: "123456")
                #expect(flow.lastCheck == .verified && flow.message == "Signed in")
                // Another number: a guesser gets five tries at its code, then it is locked.
                flow.phoneChanged("+8613800138001")
                #expect(flow.button.title == "Send code" && flow.phone == "+8613800138001")
                await flow.sendTapped()
                for _ in 0..<5 { await flow.submit(code: "999999") }
                #expect(flow.lastCheck == .codeLocked)
                await flow.submit(code: "123456")
                #expect(flow.lastCheck == .codeLocked, "the right code no longer opens a locked one")
            }
        }

        /// Issue 37, docs/clients.md's flow from end to end against a live gate, through the kit
        /// alone: send, follow the stream while the screen shows (`.task`), a refund on the back
        /// end reaches the button, back in the foreground, a new send, then the code checked.
        @Test func theDocumentedFlowRunsAgainstALiveGate() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            try await withLiveGate(cooldown: "60s") { gate in
                let flow = SignInFlow(backEnd: gate.client(), checker: DemoCodeChecker(gate: gate.client()), store: MemoryStore())
                flow.phone = "+86 138 0013 8002"
                await flow.sendTapped()
                #expect(flow.button.title == "Resend in 1:00" && flow.button.accessibilityValue == "in 1 minute")
                let live = Task { await flow.button.liveUpdates() }
                defer { live.cancel() }
                try await gate.client().release(phone: "+8613800138002", purpose: "login")  // the SMS provider failed
                let deadline = PatientDeadline(.seconds(5))
                while flow.button.state != .ready && deadline.hasTimeLeft { try await Task.sleep(for: .milliseconds(10)) }
                #expect(flow.button.state == .ready && flow.button.title == "Resend")
                await flow.becameActive()
                await flow.sendTapped()
                #expect(flow.button.lastDecision?.allowed == true && !flow.button.isEnabled)
                await flow.submit(code: "123456")
                #expect(flow.lastCheck == .verified && flow.message == "Signed in")
            }
        }

        /// Issued codes against a live gate (`--issue-codes`): the back end's send answer
        /// carries the code (it would text it), the app checks what the user typed through the
        /// kit's `check`: a refunded send's code is void; then wrong, right once, used.
        @Test func theDemoChecksIssuedCodesAgainstALiveGate() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            let options = ["--issue-codes", "--max-failed-checks", "3", "--code-secret", "the kit tests' own code secret"]
            try await withLiveGate(cooldown: "60s", options: options) { gate in
                let backEnd = gate.client()
                let flow = SignInFlow(backEnd: backEnd, checker: BackEndCodeChecker(backEnd: backEnd), phone: "+86 138 0013 8003",
                                      store: MemoryStore())
                await flow.submit(code: "482913")
                #expect(flow.lastCheck == .noCode, "no code issued yet: code_expired")
                await flow.sendTapped()
                let first = try #require(flow.button.lastDecision?.issuedCode, "the back end's answer carries the code")
                #expect(first.code?.count == 6 && first.countdownToken != nil)
                #expect((590_000...600_000).contains(first.expiresInMilliseconds))
                // Its SMS failed: the back end refunds the send, which voids the code.
                try await gate.client().release(phone: "+8613800138003", purpose: "login")
                await flow.submit(code: first.code)
                #expect(flow.checkError?.code == ResendGateError.codeVoided && flow.checkError?.status == 410)
                #expect(flow.message == "This code is no longer valid. Request a new one.")
                await flow.becameActive()  // the refund ended the countdown: the button may send again
                #expect(flow.button.isEnabled)
                await flow.sendTapped()
                let code = try #require(flow.button.lastDecision?.issuedCode?.code)
                let wrong = String(code.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) })
                await flow.submit(code: wrong)
                #expect(flow.lastCheck == .wrong(attemptsLeft: 2) && flow.message == "Wrong code: 2 more tries")
                await flow.submit(code: code)
                #expect(flow.lastCheck == .verified && flow.message == "Signed in")
                await flow.submit(code: code)
                #expect(flow.checkError?.code == ResendGateError.codeUsed && flow.message == "This code was already used. Request a new one.")
            }
        }

        /// Issued codes (issue 35's `POST /v1/checks`), against a stub back end that issues the
        /// code and proxies the check: the app never sees the code; wrong, locked, right, used.
        @Test func theDemoChecksIssuedCodesThroughTheBackEnd() async throws {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            let backEnd = IssuedCodeBackEnd()
            StubBackEnd.reset()
            StubBackEnd.answer = { backEnd.answer($0) }
            let client = StubBackEnd.makeClient(clock: VirtualClock())
            let flow = SignInFlow(backEnd: client, checker: BackEndCodeChecker(backEnd: client), phone: "+8613800138000",
                                  store: MemoryStore())
            await flow.submit(code: "482913")
            #expect(flow.lastCheck == .noCode)
            await flow.sendTapped()
            #expect(flow.button.lastDecision?.issuedCode?.code == nil, "the back end keeps the code")
            flow.code = "000000"
            await flow.submit()
            #expect(flow.lastCheck == .wrong(attemptsLeft: 2) && flow.message == "Wrong code: 2 more tries")
            await flow.submit(code: "482913")
            #expect(flow.lastCheck == .verified && flow.message == "Signed in")
            await flow.submit(code: "482913")
            #expect(flow.lastCheck == nil && flow.checkError?.code == ResendGateError.codeUsed)
            #expect(flow.message == "This code was already used. Request a new one.")
            flow.strings = .chinese
            #expect(flow.message == "验证码已使用，请重新获取。" && flow.button.title.hasSuffix("后重新发送"))
            StubBackEnd.answer = { _ in .failed(.notConnectedToInternet) }
            await flow.submit(code: "482913")
            #expect(flow.message == "网络不可用，请检查网络后重试。")
        }

        /// A second tap on Sign in while the first check is under way sends no second check:
        /// the right code is valid once, so a second check would answer `code_used` and the
        /// screen would say "already used" over "Signed in" (fails without `isChecking`).
        @Test func aSecondSignInTapDuringACheckSendsNoSecondCheck() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            let backEnd = IssuedCodeBackEnd()
            StubBackEnd.reset()
            StubBackEnd.answer = { backEnd.answer($0) }
            let client = StubBackEnd.makeClient(clock: VirtualClock())
            let flow = SignInFlow(backEnd: client, checker: BackEndCodeChecker(backEnd: client), phone: "+8613800138000",
                                  store: MemoryStore())
            await flow.sendTapped()
            StubBackEnd.hold("/v1/checks")
            flow.code = "482913"
            let first = Task { await flow.submit() }
            await StubBackEnd.waitForRequests(2)  // the send, and the first check (held)
            #expect(flow.isChecking)
            let second = Task { await flow.submit() }  // the second tap
            await Task.yield()
            StubBackEnd.release("/v1/checks")
            await first.value
            await second.value
            #expect(StubBackEnd.recorded.filter { $0.path == "/v1/checks" }.count == 1)
            #expect(flow.lastCheck == .verified && flow.message == "Signed in" && !flow.isChecking)
        }

        /// A send's error shows after a check (the check's outcome was about the last code), and
        /// a new number clears the old number's outcome (fails without `clearCheck()`).
        @Test func aNewSendOrNumberClearsTheLastCheck() async {
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }  // ResendButtonModel: Observation
            let backEnd = IssuedCodeBackEnd()
            StubBackEnd.reset()
            StubBackEnd.answer = { backEnd.answer($0) }
            let client = StubBackEnd.makeClient(clock: VirtualClock())
            let flow = SignInFlow(backEnd: client, checker: BackEndCodeChecker(backEnd: client), phone: "+8613800138000",
                                  store: MemoryStore())
            await flow.submit(code: "482913")
            #expect(flow.message == "Ask for a code first")
            StubBackEnd.answer = { _ in .failed(.notConnectedToInternet) }
            await flow.sendTapped()
            #expect(flow.lastCheck == nil && flow.message == "You're offline. Check your connection and try again.")
            StubBackEnd.answer = { backEnd.answer($0) }
            await flow.submit(code: "482913")
            #expect(flow.message == "Ask for a code first")
            flow.phone = "+8613800138001"
            #expect(flow.lastCheck == nil && flow.message == "")
        }
    }
}

/// A back end for issued codes, in process: its gate issued code 482913 with the send (it
/// would text it), and it answers `/v1/checks` as the gate does (issue 35's contract).
final class IssuedCodeBackEnd: @unchecked Sendable {
    // @unchecked: the state is guarded by `lock`.
    private let lock = NSLock()
    private var issued: String?
    private var wrong = 0
    private var used = false

    func answer(_ request: StubBackEnd.Recorded) -> StubBackEnd.Answer {
        lock.withLock {
            switch request.path {
            case "/v1/sends":
                (issued, wrong, used) = ("482913", 0, false)
                return StubBackEnd.allowed(seconds: 60, token: "T1")  // forwarded without the code
            case "/v1/checks":
                guard let issued else { return StubBackEnd.error(410, "code_expired") }
                if used { return StubBackEnd.error(409, "code_used") }
                if wrong >= 3 { return StubBackEnd.error(409, "code_locked", extra: #","retry_after":60,"retry_after_ms":60000"#) }
                guard request.body["code"] == issued else {
                    wrong += 1
                    return StubBackEnd.error(422, "wrong_code", extra: #","attempts_left":\#(3 - wrong)"#)
                }
                used = true
                return .json(status: 200, #"{"phone":"+8613800138000","purpose":"login","valid":true}"#)
            default:
                return StubBackEnd.notFound
            }
        }
    }
}
