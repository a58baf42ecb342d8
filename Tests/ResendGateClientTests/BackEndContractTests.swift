import Countdown
import Foundation
import ResendGateClient
import Testing

/// Issue 25: the back-end contract (docs/clients.md). An app's back end keeps its own paths
/// (``ClientRoutes``), and reports checked codes with the kit's own types. Part of the
/// serialized suite of the other `StubBackEnd` tests: the stub is one for the process.
extension StubBackEndSuites.ResendButtonModelRaceTests {
    @Test func theKitCallsTheBackEndsOwnPaths() async throws {
        StubBackEnd.reset()
        StubBackEnd.answer = { request in
            switch request.path {
            case "/api/otp/send": StubBackEnd.allowed(seconds: 60, token: "T1")
            case "/api/otp/verify": .json(status: 200, #"{"phone":"+8613800138000","purpose":"login","outcome":"failed","attempts_left":4}"#)
            case let path where path.hasPrefix("/api/otp/cooldowns/"):
                .json(status: 200, #"{"phone":"+8613800138000","purpose":"login","active":false,"retry_after":0,"retry_after_ms":0,"server_time":"2026-12-04T00:00:00.000Z"}"#)
            default: StubBackEnd.countdown(seconds: 30)
            }
        }
        let routes = ClientRoutes(
            sends: "/api/otp/send", cooldown: { "/api/otp/cooldowns/\($0)/\($1)" }, countdown: { "/api/otp/countdowns/\($0)" },
            countdownEvents: { "/api/otp/countdowns/\($0)/live" }, verifications: "/api/otp/verify")
        let client = StubBackEnd.makeClient(clock: VirtualClock(), routes: routes)
        _ = try await client.send(phone: "+8613800138000", purpose: "login")
        _ = try await client.countdown(token: "T1")
        _ = try await client.status(phone: "+8613800138000", purpose: "login")
        let report = try await client.reportVerification(phone: "+8613800138000", purpose: "login", outcome: .failed)
        #expect(report.attemptsLeft == 4 && report.outcome == .failed)
        #expect(StubBackEnd.recorded.map(\.path) == [
            "/api/otp/send", "/api/otp/countdowns/T1", "/api/otp/cooldowns/+8613800138000/login", "/api/otp/verify",
        ])
    }

    /// Against a real gate: a wrong code counts against the code sent, and a report for a
    /// number sent no code is refused with the gate's code.
    @Test func verificationsAreReportedWithTheKitsTypes() async throws {
        try await withLiveGate(cooldown: "60s") { gate in
            let client = gate.client()
            #expect(try await client.send(phone: "+8613800138000", purpose: "login").allowed)
            let report = try await client.reportVerification(phone: "+86 138 0013 8000", purpose: "login", outcome: .failed)
            #expect(report.phone == "+8613800138000" && report.attemptsLeft == 4)
            do throws(ResendGateError) {
                _ = try await client.reportVerification(phone: "+8613800138099", purpose: "login", outcome: .failed)
                Issue.record("a failed check for a number sent no code was counted")
            } catch {
                #expect(error.code == "no_code_sent" && error.status == 409)
            }
            #expect(try await client.reportVerification(phone: "+8613800138000", purpose: "login", outcome: .verified).attemptsLeft == nil)
        }
    }
}
