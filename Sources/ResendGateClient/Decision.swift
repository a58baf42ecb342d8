import Foundation

/// The answer to ``ResendGateClient/send(phone:purpose:idempotencyKey:clientIP:)``: allowed
/// (the cooldown starts now) or refused with a ``reason``, and in both cases the time left.
public struct Decision: Hashable, Sendable {
    /// Why a send was refused.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The API's word for it.
        public var rawValue: String
        /// Makes a reason from the API's word (one this client does not know is kept as is).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The number's cooldown still runs.
        public static let cooldown = Reason(rawValue: "cooldown")
        /// The number had its `max_sends` in the policy's window.
        public static let maxSends = Reason(rawValue: "max_sends")
        /// The client IP had its sends in its window.
        public static let ipLimit = Reason(rawValue: "ip_limit")
        /// The destination's budget (region or calling code) is spent for its window.
        public static let countryLimit = Reason(rawValue: "country_limit")
        /// The server's total budget is spent for its window.
        public static let globalLimit = Reason(rawValue: "global_limit")
        /// Wrong codes locked the number for a while.
        public static let locked = Reason(rawValue: "locked")
        /// The number's destination prefix sends codes that are not verified (SMS pumping).
        public static let suspectedPumping = Reason(rawValue: "suspected_pumping")
        /// The client's address made too many send requests, allowed or not (`--ip-max-requests`).
        public static let tooManyRequests = Reason(rawValue: "too_many_requests")
        /// Sends are refused outside the purpose's sending hours (`--send-hours`) until they begin.
        public static let outsideSendHours = Reason(rawValue: "outside_send_hours")
        /// Every reason this kit names, in the server's order (a test holds it to the server's).
        public static let known: [Reason] = [
            .cooldown, .maxSends, .ipLimit, .locked, .countryLimit, .globalLimit, .suspectedPumping, .tooManyRequests,
            .outsideSendHours,
        ]
        /// The API's word.
        public var description: String { rawValue }
    }

    /// Whether the send may go ahead (the server has started the cooldown).
    public var allowed: Bool
    /// Why it was refused; nil when allowed.
    public var reason: Reason?
    /// The canonical E.164 number.
    public var phone: String
    /// The purpose the cooldown belongs to.
    public var purpose: String
    /// Whole seconds until a send may be allowed (rounded up); the new cooldown when allowed.
    public var retryAfter: Int64
    /// The same in milliseconds, as Redis measured it.
    public var retryAfterMilliseconds: Int64
    /// When a send may be allowed again, on the server's clock.
    public var resendAt: Date
    /// The server's clock when it decided (Redis `TIME`): with ``resendAt`` it gives the time
    /// left whatever the device's own clock says.
    public var serverTime: Date
    /// The cooldown the next allowed send would start, in seconds; nil in a fail-open
    /// answer (``recorded`` false), where the server could not ask its store.
    public var nextRetryAfter: Int64?
    /// Sends still allowed in the window; nil when the policy sets no cap.
    public var sendsLeft: Int64?
    /// The handle of the running cooldown for ``ResendGateClient/countdown(token:)`` and
    /// ``ResendGateClient/countdownEvents(token:)``; nil when there is none to follow.
    public var countdownToken: String?
    /// True when the number is one of the server's test numbers (`--test-numbers`): allowed
    /// without any limit and not recorded; do not send a real SMS.
    public var testNumber: Bool
    /// Rules in observe mode that would have refused this send (`observed`); empty when none.
    public var observed: [Reason] = []
    /// False when the gate allowed the send without recording it (`--on-store-failure open`,
    /// `"store": "unavailable"`): the SMS goes out, no cooldown runs on the server and the
    /// countdown shown is the policy's for display only (no ``countdownToken``).
    public var recorded: Bool = true
    /// The code the gate issued, for a purpose with issued codes: only in the answer to the
    /// app's back end (it sends the code by SMS and forwards the rest without it).
    public var issuedCode: IssuedCode?
    /// When the answer arrived, on the client's monotonic clock, and how long it travelled.
    public var receipt: ServerReceipt

    /// The countdown this answer starts, anchored to the moment it arrived.
    public var countdown: ServerCountdown {
        ServerCountdown(remainingMilliseconds: retryAfterMilliseconds, resendAt: resendAt,
                        serverTime: serverTime, receipt: receipt)
    }
}

/// A code the gate issued with an allowed send (a purpose with issued codes): the back end
/// sends ``code`` by SMS; the app may show ``countdown`` ("code valid for 9:59").
public struct IssuedCode: Hashable, Sendable {
    /// The code itself, in a back end's answer only (never forward it to the app); nil in
    /// an app's, which still gets the code's lifetime and its countdown token.
    public var code: String?
    /// When it stops being accepted, on the server's clock.
    public var expiresAt: Date
    /// Its lifetime when issued, in milliseconds.
    public var expiresInMilliseconds: Int64
    /// A countdown token of the code's lifetime (follow it as ``Decision/countdownToken``).
    public var countdownToken: String?
    /// The server's clock when it answered.
    public var serverTime: Date
    /// When the answer arrived.
    public var receipt: ServerReceipt

    /// The code's lifetime as a countdown on the server's time.
    public var countdown: ServerCountdown {
        ServerCountdown(remainingMilliseconds: expiresInMilliseconds, resendAt: expiresAt, serverTime: serverTime,
                        receipt: receipt)
    }
}

/// A number's cooldown as ``ResendGateClient/status(phone:purpose:)`` reads it, consuming nothing.
public struct CooldownStatus: Hashable, Sendable {
    /// The canonical E.164 number.
    public var phone: String
    /// The purpose the cooldown belongs to.
    public var purpose: String
    /// Whether a cooldown runs.
    public var active: Bool
    /// Whole seconds left, rounded up; 0 when none runs.
    public var retryAfter: Int64
    /// The same in milliseconds.
    public var retryAfterMilliseconds: Int64
    /// When it ends, on the server's clock; nil when none runs.
    public var resendAt: Date?
    /// The server's clock when it answered.
    public var serverTime: Date
    /// When the answer arrived, on the client's monotonic clock.
    public var receipt: ServerReceipt
}

/// A countdown as ``ResendGateClient/countdown(token:)`` reads it.
public struct CountdownStatus: Hashable, Sendable {
    /// Whether the cooldown still runs.
    public var active: Bool
    /// Whole seconds left, rounded up.
    public var retryAfter: Int64
    /// The same in milliseconds.
    public var retryAfterMilliseconds: Int64
    /// When it ends, on the server's clock.
    public var resendAt: Date
    /// The server's clock when it answered.
    public var serverTime: Date
    /// When the answer arrived, on the client's monotonic clock.
    public var receipt: ServerReceipt

    /// The countdown, anchored to the moment the answer arrived.
    public var countdown: ServerCountdown {
        ServerCountdown(remainingMilliseconds: active ? retryAfterMilliseconds : 0, resendAt: resendAt,
                        serverTime: serverTime, receipt: receipt)
    }
}
