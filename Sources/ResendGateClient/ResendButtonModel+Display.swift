import Countdown
import Foundation

/// What the button shows and VoiceOver reads, and the deadline for the system's own timers.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension ResendButtonModel {
    /// The button's label: "Send code", "Sending…", "Resend in 42s", "Resend".
    public var title: String {
        switch state {
        case .idle: strings.send
        case .sending: strings.sending
        case .counting(let seconds): strings.digits(CountdownValue(totalSeconds: seconds).resendPrompt(.bySize, strings: strings.countdown))
        case .ready: strings.resend
        }
    }

    /// Whether tapping the button would send: not while sending or counting down.
    public var isEnabled: Bool {
        switch state {
        case .idle, .ready: true
        case .sending, .counting: false
        }
    }

    /// The key the countdown is saved under: per purpose and number (a hash of the number's
    /// digits: not in clear, but reversible by trying every number; see `storageKey(purpose:phone:)`).
    public var storageKey: String { Self.storageKey(purpose: purpose, phone: phone) }

    /// What VoiceOver reads as the button's name: "Send code", "Sending code", "Resend code".
    public var accessibilityLabel: String {
        switch state {
        case .idle: strings.accessibilitySend
        case .sending: strings.accessibilitySending
        case .counting, .ready: strings.accessibilityResend
        }
    }

    /// What VoiceOver reads after the name while counting: "in 42 seconds", "in 1 minute 5
    /// seconds" (not "1:05"); empty otherwise.
    public var accessibilityValue: String {
        guard case .counting(let seconds) = state else { return "" }
        return strings.digits(strings.accessibilityWait(strings.spokenDuration(seconds)))
    }

    /// When the countdown ends, on this device's wall clock (the server's deadline with the
    /// device clock's offset taken out, read now): for `Text(timerInterval:)`, a widget's
    /// timeline or a Live Activity, which count on the device's clock. Nil when none runs.
    public var countdownEnd: Date? {
        guard let countdown else { return nil }
        return client.clock.wallNow.addingTimeInterval(countdown.remaining(at: client.clock.now) / .seconds(1))
    }

    /// The last error as a sentence for the user, in ``strings``' language (nil when none).
    public var errorMessage: String? { lastError?.userMessage(strings) }
}
