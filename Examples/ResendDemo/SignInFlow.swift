import Countdown
import Foundation
import ResendGateClient

/// The sign-in screen's logic, free of UI: a phone field, a send button that counts down on
/// the server's time, and a code field whose outcome the back end checks and reports.
/// `SignInView` (SwiftUI, Apple platforms) draws it; the tests run it on Linux.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
public final class SignInFlow {
    /// The send button: its title ("Resend in 42s") and whether it may be tapped.
    public let button: ResendButtonModel
    /// What the code field last came to (nil before a check).
    public private(set) var lastCheck: CodeCheck?
    private let checker: any CodeChecking

    /// `backEnd`: the app's back end, which forwards the kit's routes to the gate.
    public init(backEnd: ResendGateClient, checker: any CodeChecking, phone: String = "",
                store: any ResendStateStore = UserDefaults.standard) {
        button = ResendButtonModel(client: backEnd, phone: phone, purpose: "login", store: store)
        self.checker = checker
    }

    /// The phone field changed: the button starts afresh for that number.
    public func phoneChanged(_ text: String) { button.phone = text }

    public func sendTapped() async { await button.send() }

    /// The user typed `code` and pressed Sign in.
    public func submit(code: String) async {
        lastCheck = try? await checker.check(phone: button.phone, purpose: button.purpose, code: code)
    }

    /// What the screen says under the code field.
    public var message: String {
        switch lastCheck {
        case nil: ""
        case .verified: "Signed in"
        case .wrong(let left?): "Wrong code: \(left) more tries"
        case .wrong(nil): "Wrong code"
        case .codeLocked: "Too many wrong codes: ask for a new one"
        case .noCode: "Ask for a code first"
        }
    }
}
