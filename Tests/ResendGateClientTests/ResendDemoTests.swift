import Foundation
import ResendDemo
import ResendGateClient
import Testing

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
            #expect(flow.button.title == "Send code")
            await flow.sendTapped()
            for _ in 0..<5 { await flow.submit(code: "999999") }
            #expect(flow.lastCheck == .codeLocked)
            await flow.submit(code: "123456")
            #expect(flow.lastCheck == .codeLocked, "the right code no longer opens a locked one")
        }
    }
}
