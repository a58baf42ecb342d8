import Countdown
import Foundation
import Observation

/// The state of a "Send code / Resend in 42s" button, done once: send, count down on the
/// server's time, survive a relaunch, and catch up when the app returns to the foreground.
///
/// `@Observable` and `@MainActor`, and free of UIKit, AppKit and SwiftUI: SwiftUI reads
/// ``title`` and ``isEnabled`` directly; UIKit and AppKit set ``onChange``. Needs
/// Observation, so macOS 14, iOS 17, tvOS 17, watchOS 10 or visionOS 1 (the rest of the
/// kit runs on macOS 13 and iOS 16).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable
public final class ResendButtonModel {
    /// Where the button is.
    public enum State: Hashable, Sendable {
        /// No code sent yet.
        case idle
        /// The request is under way.
        case sending
        /// A cooldown runs: whole seconds left.
        case counting(seconds: Int64)
        /// The cooldown is over: a resend may go ahead.
        case ready
    }

    /// Where the button is.
    public private(set) var state: State = .idle
    /// Why the last send was refused (nil after an allowed one).
    public private(set) var refusal: Decision.Reason?
    /// The last call's failure (nil after one that succeeded).
    public private(set) var lastError: ResendGateError?
    /// The words used by ``title``.
    public var strings: ResendButtonStrings { didSet { changed() } }
    /// Called on the main actor after every change of state, for UIKit and AppKit.
    @ObservationIgnored public var onChange: (@MainActor (ResendButtonModel) -> Void)?

    /// The number codes go to (change it to start afresh for another number).
    public var phone: String
    /// The purpose, which also keys what is saved.
    public let purpose: String
    @ObservationIgnored private let client: ResendGateClient
    @ObservationIgnored private let store: any ResendStateStore
    @ObservationIgnored private let center: CountdownCenter
    @ObservationIgnored private var saved: SavedCountdown?
    @ObservationIgnored private var subscription: CountdownSubscription?

    /// Makes the model for `phone` and `purpose`, restoring a countdown saved by an earlier
    /// launch (one that ended meanwhile gives ``State/ready``, once). `center` ticks the
    /// countdown and must read the same clock as `client`.
    public init(client: ResendGateClient, phone: String, purpose: String = "default",
                store: any ResendStateStore = UserDefaults.standard,
                center: CountdownCenter? = nil, strings: ResendButtonStrings = .english) {
        self.client = client
        self.phone = phone
        self.purpose = purpose
        self.store = store
        self.strings = strings
        self.center = center ?? CountdownCenter(clock: client.clock, scheduler: DispatchCountdownScheduler())
        restore()
    }

    /// The button's label: "Send code", "Sending…", "Resend in 42s", "Resend".
    public var title: String {
        switch state {
        case .idle: strings.send
        case .sending: strings.sending
        case .counting(let seconds): CountdownValue(totalSeconds: seconds).resendPrompt(strings: strings.countdown)
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

    /// The key the countdown is saved under.
    public var storageKey: String { "resendgate.countdown.\(purpose)" }

    /// Sends a code: ``State/sending``, then the server's countdown (allowed or refused
    /// with a ``refusal``), or back where it was with ``lastError`` set.
    public func send(idempotencyKey: String? = UUID().uuidString) async {
        guard isEnabled else { return }
        let before = state
        state = .sending
        changed()
        do {
            let decision = try await client.send(phone: phone, purpose: purpose, idempotencyKey: idempotencyKey)
            lastError = nil
            refusal = decision.reason
            follow(decision.countdown, token: decision.countdownToken)
        } catch {
            lastError = error
            state = before
            changed()
        }
    }

    /// Asks the server for the countdown's time left (call it when the app returns to the
    /// foreground, or after the device clock changed): corrects it, or ends it if it was
    /// released meanwhile. Does nothing without a running countdown.
    public func refresh() async {
        guard let token = saved?.token, case .counting = state else { return }
        do {
            let status = try await client.countdown(token: token)
            lastError = nil
            follow(status.countdown, token: token)
        } catch where error.code == ResendGateError.notFound {
            lastError = nil
            finish()
        } catch {
            lastError = error
            changed()
        }
    }

    // MARK: - Countdown

    private var countdownID: CountdownID { CountdownID("resendgate.\(purpose)") }

    private func follow(_ countdown: ServerCountdown, token: String?) {
        saved = countdown.saved(token: token)
        store.save(try? JSONEncoder().encode(saved), forKey: storageKey)
        center.start(countdownID, deadline: countdown.deadline)
        subscription?.cancel()
        if case .value(let value) = center.currentEvent(for: countdownID) {
            state = .counting(seconds: value.totalSeconds)
            changed()
        }
        subscription = center.subscribeOnMainActor(to: countdownID, owner: self) { model, event in
            model.show(event)
        }
    }

    private func show(_ event: CountdownEvent) {
        switch event {
        case .value(let value):
            guard state != .counting(seconds: value.totalSeconds) else { return }
            state = .counting(seconds: value.totalSeconds)
            changed()
        case .finished:
            finish()
        }
    }

    private func finish() {
        subscription?.cancel()
        subscription = nil
        center.cancel(countdownID)
        saved = nil
        store.save(nil, forKey: storageKey)
        guard state != .ready else { return }
        state = .ready
        changed()
    }

    private func restore() {
        guard let data = store.savedData(forKey: storageKey),
              let saved = try? JSONDecoder().decode(SavedCountdown.self, from: data)
        else { return }
        follow(saved.restored(on: client.clock), token: saved.token)
        if center.currentEvent(for: countdownID) == .finished { finish() }
    }

    private func changed() {
        onChange?(self)
    }
}
