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
    /// The last send's answer (nil before one, and after a number change): its
    /// ``Decision/recorded`` is false when the gate let the send through without recording
    /// it (`--on-store-failure open`).
    public private(set) var lastDecision: Decision?
    /// The running countdown on the server's time (nil when none runs): its ``ServerCountdown/resendAt``
    /// is the server's deadline; ``countdownEnd`` the same moment on this device's clock.
    public private(set) var countdown: ServerCountdown?
    /// The last call's failure (nil after one that succeeded).
    public private(set) var lastError: ResendGateError?
    /// The words used by ``title``.
    public var strings: ResendButtonStrings { didSet { changed() } }
    /// Called on the main actor after every change of state, for UIKit and AppKit; and once
    /// at once when set, with the state as it is (a countdown restored at launch, say), so
    /// a label is right from its first frame whenever it is wired.
    @ObservationIgnored public var onChange: (@MainActor (ResendButtonModel) -> Void)? {
        didSet { onChange?(self) }
    }

    /// The number codes go to. Changing it starts afresh for the new number: the old
    /// number's countdown stops (it keeps running on the server, and is back when the phone
    /// is changed back), and a countdown saved for the new one is restored.
    public var phone: String {
        didSet {
            guard phone != oldValue else { return }
            switchNumber(from: oldValue)
        }
    }
    /// The purpose, which also keys what is saved.
    public let purpose: String
    /// The client calls go through; replace it to point at another back end (for a rotating
    /// user token, give the client a header provider instead: nothing needs rebuilding).
    @ObservationIgnored public var client: ResendGateClient
    @ObservationIgnored private let store: any ResendStateStore
    @ObservationIgnored private let center: CountdownCenter
    @ObservationIgnored private var saved: SavedCountdown?
    @ObservationIgnored private var subscription: CountdownSubscription?
    /// Bumped by every send, refresh and number change: an answer to an older one is late.
    @ObservationIgnored private var generation = 0
    /// The live stream of the running countdown, while ``startLiveUpdates()`` asked for it;
    /// cancelled when replaced or cleared.
    @ObservationIgnored private var liveUpdates: Task<Void, Never>? {
        didSet {
            oldValue?.cancel()
            cleanup.task = liveUpdates
        }
    }
    /// Ends the live task and the center's record when the model is freed.
    @ObservationIgnored private let cleanup: ModelCleanup
    /// Waits between the kit's own retries of a send; a test puts its own here.
    @ObservationIgnored package var sleepBeforeRetry: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    /// The jitter of each retry's delay, 0 up to 1 (random); a test fixes it.
    @ObservationIgnored package var retryJitter: @Sendable () -> Double = { Double.random(in: 0..<1) }
    @ObservationIgnored private var wantsLiveUpdates = false

    /// Makes the model for `phone` and `purpose`, restoring a countdown saved by an earlier
    /// launch (one that ended meanwhile gives ``State/ready``, once). `center` ticks the
    /// countdown and must read the same clock as `client` (by default the shared one,
    /// ``Countdown/CountdownCenter/shared``, for a client on the system clock).
    public init(client: ResendGateClient, phone: String, purpose: String = "default",
                store: any ResendStateStore = UserDefaults.standard,
                center: CountdownCenter? = nil, strings: ResendButtonStrings = .english) {
        self.client = client
        self.phone = phone
        self.purpose = purpose
        self.store = store
        self.strings = strings
        // The app's shared center (one timer for every button) when the client reads the
        // system clock; a center of its own for any other clock.
        let center = center ?? (client.clock is SystemCountdownClock
            ? .shared : CountdownCenter(clock: client.clock, scheduler: DispatchCountdownScheduler()))
        self.center = center
        cleanup = ModelCleanup(center: center)
        restore()
    }

    /// Sends a code: ``State/sending``, then the server's countdown (allowed or refused
    /// with a ``refusal``), or back where it was with ``lastError`` set. One call is one
    /// user action: one `Idempotency-Key` (`idempotencyKey`, or a new one), reused by the
    /// kit's own retries. A cancelled task goes back where it was, with no error.
    public func send(idempotencyKey: String? = nil) async {
        guard isEnabled else { return }
        let key = idempotencyKey ?? UUID().uuidString
        let before = state
        generation += 1
        let mine = generation
        state = .sending
        changed()
        for attempt in 0...Self.sendRetries {
            do {
                let decision = try await client.send(phone: phone, purpose: purpose, idempotencyKey: key)
                guard generation == mine else { return }  // the number changed meanwhile
                lastError = nil
                refusal = decision.reason
                lastDecision = decision
                return follow(decision.countdown, token: decision.countdownToken)
            } catch {
                guard generation == mine else { return }
                var cancelled = Task.isCancelled || error.code == ResendGateError.cancelled
                if !cancelled, Self.retriesSend(after: error), attempt < Self.sendRetries {
                    do {
                        try await sleepBeforeRetry(Self.retryDelay(attempt: attempt, jitter: retryJitter()))
                        guard generation == mine else { return }
                        continue
                    } catch {
                        cancelled = true
                    }
                }
                guard generation == mine else { return }
                if !cancelled { lastError = error }
                state = before
                return changed()
            }
        }
    }

    /// Asks the server for the countdown's time left (call it when the app returns to the
    /// foreground, or after the device clock changed): corrects it, or ends it if it was
    /// released meanwhile. Does nothing without a running countdown; an answer that comes
    /// after a newer send, refresh or number change is dropped.
    public func refresh() async {
        guard let token = saved?.token, case .counting = state else { return }
        generation += 1
        let mine = generation
        do {
            let status = try await client.countdown(token: token)
            guard generation == mine, saved?.token == token else { return }
            lastError = nil
            follow(status.countdown, token: token)
        } catch where error.code == ResendGateError.notFound {
            guard generation == mine, saved?.token == token else { return }
            lastError = nil
            finish()
        } catch {
            guard generation == mine, error.code != ResendGateError.cancelled else { return }
            lastError = error
            changed()
            // This refresh's generation outdated the live stream's: follow it again, or a
            // failed refresh (back in the foreground on a flaky network) would end it silently.
            if wantsLiveUpdates { followLive() }
        }
    }

    /// Follows the running countdown's event stream while the button is on screen (call it
    /// on appear, ``stopLiveUpdates()`` on disappear): a release by the back end (the SMS
    /// provider failed) ends the countdown within a second, and each tick corrects it.
    public func startLiveUpdates() {
        wantsLiveUpdates = true
        followLive()
    }

    /// Stops following the event stream (the button left the screen); the countdown goes
    /// on from its deadline.
    public func stopLiveUpdates() {
        wantsLiveUpdates = false
        liveUpdates = nil
    }

    private func followLive() {
        liveUpdates = nil
        guard wantsLiveUpdates, let token = saved?.token, case .counting = state else { return }
        let mine = generation
        let events = client.countdownEvents(token: token)
        liveUpdates = Task { [weak self] in
            do {
                for try await update in events {
                    guard let self, self.generation == mine, self.saved?.token == token else { return }
                    switch update {
                    case .tick(let tick):
                        self.center.start(self.countdownID, deadline: tick.deadline)
                        self.countdown?.deadline = tick.deadline
                    case .done: self.finish()
                    }
                }
            } catch let error as ResendGateError where error.code == ResendGateError.notFound {
                // Gone before the stream could connect (released, or ended): it is over.
                guard let self, self.generation == mine, self.saved?.token == token else { return }
                self.finish()
            } catch {
                // The stream gave up (its reconnects failed): the countdown goes on from its deadline.
            }
        }
    }

    // MARK: - Countdown

    private var countdownID: CountdownID { countdownID(phone: phone) }

    /// This model's countdown in the (shared) center: its own, so that another model of the
    /// same number never ends it.
    private func countdownID(phone: String) -> CountdownID {
        CountdownID("resendgate.\(purpose).\(Self.numberDigest(phone)).\(ObjectIdentifier(self).hashValue)")
    }

    private func switchNumber(from old: String) {
        generation += 1
        liveUpdates = nil
        subscription?.cancel()
        subscription = nil
        center.cancel(countdownID(phone: old))
        saved = nil
        countdown = nil
        lastDecision = nil
        refusal = nil
        lastError = nil
        state = .idle
        restore()
        changed()
    }

    private func follow(_ countdown: ServerCountdown, token: String?) {
        saved = countdown.saved(token: token)
        self.countdown = countdown
        store.save(try? JSONEncoder().encode(saved), forKey: storageKey)
        center.start(countdownID, deadline: countdown.deadline)
        cleanup.id = countdownID
        subscription?.cancel()
        if case .value(let value) = center.currentEvent(for: countdownID) {
            state = .counting(seconds: value.totalSeconds)
            changed()
        }
        subscription = center.subscribeOnMainActor(to: countdownID, owner: self) { model, event in
            model.show(event)
        }
        if wantsLiveUpdates { followLive() }
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
        liveUpdates = nil
        subscription?.cancel()
        subscription = nil
        center.cancel(countdownID)
        saved = nil
        countdown = nil
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
