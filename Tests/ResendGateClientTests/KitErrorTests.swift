import Countdown
import Foundation
import ResendGateClient
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StubBackEndSuites {
    /// Issue 37: errors an app can show (typed codes, waits, offline, sentences for users),
    /// and the code check of issued codes through the back end.
    @Suite(.serialized) struct KitErrorTests {
        static let phone = "+8613800138000"

        @Test func offlineIsFlaggedAndNotRetriable() async {
            StubBackEnd.reset()
            StubBackEnd.answer = { _ in .failed(.notConnectedToInternet) }
            do {
                _ = try await StubBackEnd.makeClient(clock: VirtualClock()).status(phone: Self.phone)
                Issue.record("no error")
            } catch {
                #expect(error.code == ResendGateError.transport && error.isOffline && !error.isRetriable)
                #expect(error.localizedDescription == "You're offline. Check your connection and try again.")
                #expect(error.userMessage(.chinese) == "网络不可用，请检查网络后重试。")
            }
            StubBackEnd.answer = { _ in .failed(.timedOut) }
            do {
                _ = try await StubBackEnd.makeClient(clock: VirtualClock()).status(phone: Self.phone)
            } catch {
                #expect(error.code == ResendGateError.transport && !error.isOffline && error.isRetriable)
            }
        }

        /// Every code the server answers (APIError.swift's own and every GateError.Kind, read
        /// from the server's sources) has a constant here and a row in docs/clients.md's mapping.
        @Test func everyServerCodeIsMappedAndDocumented() throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            func read(_ path: String) throws -> String {
                try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            }
            let apiError = try read("Sources/ResendGateServer/APIError.swift")
            let gateError = try read("Sources/ResendGate/Gate/GateError.swift")
            let clients = try read("docs/clients.md")
            var codes = apiError.components(separatedBy: "APIError(\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
            let kinds = try #require(gateError.range(of: "public enum Kind")).upperBound
            for line in gateError[kinds...].components(separatedBy: "\n    }")[0].split(separator: "\n") {
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                guard words.first == "case", words.count >= 2 else { continue }
                codes.append(words.count >= 4 ? words[3].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : String(words[1]))
            }
            #expect(codes.count >= 25 && codes.contains("wrong_code") && codes.contains("locked"), "\(codes)")
            for code in Set(codes) {
                #expect(ResendGateError.apiCodes.contains(ResendGateError.Code(rawValue: code)), "no constant for \(code)")
                #expect(clients.contains("`\(code)`"), "docs/clients.md maps no \(code)")
            }
        }

        @Test func userMessagesByCodeInEnglishAndChinese() {
            func error(_ code: ResendGateError.Code, status: Int = 400, wait: Duration? = nil, left: Int? = nil) -> ResendGateError {
                ResendGateError(code: code, message: "debug", status: status, retryAfter: wait, attemptsLeft: left)
            }
            let english: [(ResendGateError, String)] = [
                (error(ResendGateError.invalidPhone), "This phone number isn't valid."),
                (error(ResendGateError.wrongCode, status: 422, left: 1), "Wrong code. 1 try left."),
                (error(ResendGateError.wrongCode, status: 422, left: 3), "Wrong code. 3 tries left."),
                (error(ResendGateError.codeLocked, status: 409, wait: .seconds(65)), "Too many wrong codes. Request a new code in 1 minute 5 seconds."),
                (error(ResendGateError.locked, status: 429, wait: .milliseconds(899_500)), "Too many wrong codes. Try again in 15 minutes."),
                (error(ResendGateError.codeExpired, status: 410), "This code has expired. Request a new one."),
                (error(ResendGateError.rateLimited, status: 429, wait: .seconds(1)), "The service is busy. Try again in 1 second."),
                (error(ResendGateError.httpError, status: 502), "The service is busy. Try again shortly."),
                (error(ResendGateError.invalidJSON), "Something went wrong. Try again later."),
            ]
            for (error, text) in english { #expect(error.errorDescription == text, "\(error.code)") }
            #expect(error(ResendGateError.wrongCode, status: 422, left: 3).userMessage(.chinese) == "验证码错误，还可尝试3次。")
            #expect(error(ResendGateError.locked, status: 429, wait: .seconds(42)).userMessage(.chinese) == "错误次数过多，请42秒后再试。")
        }

        /// `POST /v1/checks` through the back end: the right code, then each refusal as a typed error.
        @Test func checkReadsEveryAnswerOfIssuedCodes() async throws {
            StubBackEnd.reset()
            let client = StubBackEnd.makeClient(clock: VirtualClock())
            StubBackEnd.answer = { _ in .json(status: 200, #"{"phone":"+8613800138000","purpose":"login","valid":true}"#) }
            let result = try await client.check(phone: "138 0013 8000", purpose: "login", code: "482913")
            #expect(result == CodeCheckResult(phone: Self.phone, purpose: "login"))
            let sent = try #require(StubBackEnd.recorded.last)
            #expect(sent.method == "POST" && sent.path == "/v1/checks")
            #expect(sent.body == ["phone": "138 0013 8000", "purpose": "login", "code": "482913"])
            let refusals: [(StubBackEnd.Answer, ResendGateError.Code, Int?, Duration?)] = [
                (StubBackEnd.error(422, "wrong_code", extra: #","attempts_left":2"#), ResendGateError.wrongCode, 2, nil),
                (StubBackEnd.error(409, "code_locked", extra: #","retry_after":40,"retry_after_ms":39200"#), ResendGateError.codeLocked, nil, .milliseconds(39_200)),
                (StubBackEnd.error(429, "locked", extra: #","retry_after":900,"retry_after_ms":900000"#), ResendGateError.locked, nil, .seconds(900)),
                (StubBackEnd.error(410, "code_expired"), ResendGateError.codeExpired, nil, nil),
                (StubBackEnd.error(409, "code_used"), ResendGateError.codeUsed, nil, nil),
                (StubBackEnd.error(410, "code_voided"), ResendGateError.codeVoided, nil, nil),
                (StubBackEnd.error(409, "codes_not_issued"), ResendGateError.codesNotIssued, nil, nil),
            ]
            for (answer, code, left, wait) in refusals {
                StubBackEnd.answer = { _ in answer }
                do {
                    _ = try await client.check(phone: Self.phone, purpose: "login", code: "000000")
                    Issue.record("\(code) read as valid")
                } catch {
                    #expect(error.code == code && error.attemptsLeft == left && error.retryAfter == wait, "\(error)")
                }
            }
        }

        /// A back end's answer to an allowed send of a purpose with issued codes carries the code
        /// and its lifetime (the back end sends it by SMS and forwards the rest).
        @Test func anIssuedCodeIsReadFromTheBackEndsAnswer() async throws {
            let (issued, clock) = try await Self.issuedCode(answering: #""code":"482913","#)
            #expect(issued.code == "482913" && issued.expiresInMilliseconds == 600_000 && issued.countdownToken == "C1")
            #expect(issued.countdown.remaining(at: clock.now) == .seconds(600))
        }

        /// An app's answer has no `code` (the back end keeps it), but the code's lifetime and
        /// its countdown token are read: "code expires in 9:12" through the kit.
        @Test func anAppsAnswerWithoutTheCodeKeepsTheCodesCountdown() async throws {
            let (issued, clock) = try await Self.issuedCode(answering: "")
            #expect(issued.code == nil && issued.countdownToken == "C1")
            #expect(issued.countdown.remaining(at: clock.now) == .seconds(600))
        }

        /// The issued code of an allowed send whose answer has `code` (a JSON member and its
        /// comma, or "" for none), its lifetime and its countdown token, read by the kit.
        static func issuedCode(answering code: String) async throws -> (IssuedCode, VirtualClock) {
            StubBackEnd.reset()
            let now = Date(), formatter = ISO8601DateFormatter.withMilliseconds
            let body = """
                {"allowed":true,"phone":"+8613800138000","purpose":"login","retry_after":60,"retry_after_ms":60000,\
                "resend_at":"\(formatter.string(from: now.addingTimeInterval(60)))","server_time":"\(formatter.string(from: now))",\
                "next_retry_after":60,"sends_left":null,"countdown_token":"T1",\(code)\
                "code_expires_at":"\(formatter.string(from: now.addingTimeInterval(600)))","code_expires_in_ms":600000,\
                "code_countdown_token":"C1"}
                """
            StubBackEnd.answer = { _ in .json(status: 200, body) }
            let clock = VirtualClock()
            let decision = try await StubBackEnd.makeClient(clock: clock).send(phone: phone, purpose: "login")
            return (try #require(decision.issuedCode), clock)
        }
    }
}
