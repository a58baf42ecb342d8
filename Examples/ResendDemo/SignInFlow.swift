import Countdown
import Foundation
import Observation
import ResendGateClient

/// The sign-in screen's logic, free of UI: a phone field, a send button that counts down on
/// the server's time, and a code field checked through the back end. `@Observable`: a view
/// holds it in `@State` and redraws on every change (the message, the button's title).
/// `SignInView` (SwiftUI, Apple platforms) draws it; the tests run it on Linux.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable
public final class SignInFlow {
    /// The send button: its title ("Resend in 42s") and whether it may be tapped.
    public let button: ResendButtonModel
    /// The phone field, kept as typed; the button follows it, and the last check's outcome,
    /// which was about the old number, goes.
    public var phone: String {
        didSet {
            guard phone != oldValue else { return }
            button.phone = phone
            clearCheck()
        }
    }
    /// The code field.
    public var code = ""
    /// What the code field last came to (nil before a check, and after one that failed).
    public private(set) var lastCheck: CodeCheck?
    /// Why the last check could not be made (offline, the back end down, a used code).
    public private(set) var checkError: ResendGateError?
    /// True while a check is under way: Sign in is disabled, and another tap sends nothing
    /// (a second check of the right code would answer `code_used` over "Signed in").
    public private(set) var isChecking = false
    /// The screen's words (the button's too).
    public var strings: ResendButtonStrings {
        didSet { button.strings = strings }
    }
    @ObservationIgnored private let checker: any CodeChecking

    /// `backEnd`: the app's back end, which forwards the kit's routes to the gate; `checker`
    /// checks codes through it (``BackEndCodeChecker`` for issued codes).
    public init(backEnd: ResendGateClient, checker: any CodeChecking, phone: String = "",
                store: any ResendStateStore = UserDefaults.standard, strings: ResendButtonStrings = .english) {
        button = ResendButtonModel(client: backEnd, phone: phone, purpose: "login", store: store, strings: strings)
        self.phone = phone
        self.strings = strings
        self.checker = checker
    }

    /// The phone field changed: the button starts afresh for that number.
    public func phoneChanged(_ text: String) { phone = text }

    /// A new code: the last check's outcome is over, and the send's own error, if any, shows.
    public func sendTapped() async {
        clearCheck()
        await button.send()
    }

    /// Back in the foreground: the server's countdown wins over what was counted meanwhile.
    public func becameActive() async { await button.refresh() }

    /// The user pressed Sign in with `code` (the code field's by default).
    public func submit(code: String? = nil) async {
        guard !isChecking else { return }
        isChecking = true
        defer { isChecking = false }
        if let code { self.code = code }
        do {
            lastCheck = try await checker.check(phone: phone, purpose: button.purpose, code: self.code)
            checkError = nil
        } catch {
            lastCheck = nil
            checkError = error.code == ResendGateError.cancelled ? nil : error
        }
    }

    private func clearCheck() {
        lastCheck = nil
        checkError = nil
    }

    /// What the screen says under the code field: the check's outcome, or why the last send
    /// or check failed, for the user.
    public var message: String {
        if let checkError { return checkError.userMessage(strings) }
        switch lastCheck {
        case nil: return button.errorMessage ?? ""
        case .verified: return "Signed in"
        case .wrong(let left?): return "Wrong code: \(left) more tries"
        case .wrong(nil): return "Wrong code"
        case .codeLocked: return "Too many wrong codes: ask for a new one"
        case .noCode: return "Ask for a code first"
        }
    }
}
