/// The answer to "may a code be sent to this number now?".
public struct Decision: Sendable, Equatable {
    /// Which limit refused a send. When several do, the one that ends last.
    public typealias Reason = DecisionReason

    /// Why the send was refused; nil when allowed.
    public let reason: Reason?
    /// True when the send was allowed, and so reserved: the cooldown now runs.
    public var allowed: Bool { reason == nil }
    public let phone: PhoneNumber
    public let purpose: Purpose
    /// Milliseconds until a send may be allowed (from Redis): the longest of every limit
    /// that binds the next send. When allowed, the wait this send started: its ladder
    /// step, or longer when it filled `max sends` or the client IP's cap.
    public internal(set) var retryAfterMilliseconds: Int64
    /// Redis's clock when it decided, in ms since 1970.
    public let serverTimeMilliseconds: Int64
    /// Sends counted in the policy's window, this one included when allowed: at most
    /// `max(max sends, ladder steps, 16)`, the last sends a window keeps.
    public let sendsInWindow: Int
    /// Sends still allowed in the window; nil when the policy sets no cap.
    public let sendsLeft: Int?
    /// The cooldown the next allowed send would start, in ms.
    public let nextRetryAfterMilliseconds: Int64
    /// True when this is the stored answer to an earlier request with the same
    /// `Idempotency-Key`: nothing was consumed this time.
    public let replayed: Bool
    /// The unguessable handle of the cooldown this decision started (allowed) or ran into
    /// (denied), for thin clients: `GET /v1/countdowns/{token}`. Nil when unknown.
    public var countdownToken: CountdownToken?
    /// True for a test number (`GateConfiguration.testNumbers`): allowed, nothing recorded,
    /// no limit applied; the caller must not send a real SMS.
    public let testNumber: Bool
    /// Rules in observe mode that would have refused this send (`Policy.observe`): the
    /// send was decided as if they were off. Empty when none.
    public internal(set) var observed: [Reason]
    /// The quota of the send budget that refused this send (`country_limit`,
    /// `global_limit`): of a region's and its calling code's budgets, the one that was full;
    /// for `too_many_requests`, the requests an address may make in the period. Nil for any
    /// other answer.
    public let budgetLimit: Int?
    /// The code an allowed send of a purpose that issues codes sends (`Policy.codes`), in
    /// the answer and in its idempotent replay only; nil otherwise.
    public internal(set) var issuedCode: IssuedCode?

    /// A decision on `request`: allowed when `reason` is nil, else refused by it; `wait` and
    /// `now` are `retryAfterMilliseconds` and `serverTimeMilliseconds`, `next`
    /// `nextRetryAfterMilliseconds`, `token` its `countdownToken`, the rest their members.
    public init(
        _ request: SendRequest, refusedBy reason: Reason? = nil, wait: Int64, now: Int64, next: Int64 = 0,
        sendsInWindow: Int = 0, sendsLeft: Int? = nil, token: CountdownToken? = nil, observed: [Reason] = [],
        budgetLimit: Int? = nil, replayed: Bool = false, testNumber: Bool = false
    ) {
        self.reason = reason
        phone = request.phone
        purpose = request.purpose
        retryAfterMilliseconds = wait
        serverTimeMilliseconds = now
        nextRetryAfterMilliseconds = next
        self.sendsInWindow = sendsInWindow
        self.sendsLeft = sendsLeft
        countdownToken = token
        self.observed = observed
        self.budgetLimit = budgetLimit
        self.replayed = replayed
        self.testNumber = testNumber
    }

    /// The same decision with a wait of at least `milliseconds`: an allowed send that
    /// filled a limit checked apart (a cluster's per-IP cap) binds the next send too.
    func waiting(atLeast milliseconds: Int64) -> Decision {
        var longer = self
        longer.retryAfterMilliseconds = max(milliseconds, retryAfterMilliseconds)
        return longer
    }

    /// Whole seconds until a send may be allowed, rounded up: 59 001 ms is 60 s.
    public var retryAfter: Int64 { Self.wholeSeconds(retryAfterMilliseconds) }
    /// The next cooldown in whole seconds, rounded up.
    public var nextRetryAfter: Int64 { Self.wholeSeconds(nextRetryAfterMilliseconds) }
    /// When a send may be allowed, in ms since 1970.
    public var resendAtMilliseconds: Int64 { serverTimeMilliseconds + retryAfterMilliseconds }

    /// `ceil(ms / 1000)` for non-negative ms; 0 only for 0.
    public static func wholeSeconds(_ milliseconds: Int64) -> Int64 {
        milliseconds <= 0 ? 0 : (milliseconds + 999) / 1000
    }
}

/// What a peek found: a number's cooldown, without consuming anything.
public struct CooldownStatus: Sendable, Equatable {
    public let phone: PhoneNumber
    public let purpose: Purpose
    /// Milliseconds until the number's own limits (its cooldown, `max sends`) allow the
    /// next send; 0 when none refuses.
    public let retryAfterMilliseconds: Int64
    /// Redis's clock when it answered, in ms since 1970.
    public let serverTimeMilliseconds: Int64

    /// Whether a cooldown runs now.
    public var active: Bool { retryAfterMilliseconds > 0 }
    /// Whole seconds left, rounded up.
    public var retryAfter: Int64 { Decision.wholeSeconds(retryAfterMilliseconds) }
    /// When the cooldown ends, in ms since 1970; nil when none runs.
    public var resendAtMilliseconds: Int64? { active ? serverTimeMilliseconds + retryAfterMilliseconds : nil }
}

/// A countdown read through its token: how long its cooldown still runs, and nothing
/// about the number.
public struct CountdownReading: Sendable, Equatable {
    /// Milliseconds left (Redis's `PTTL`), always positive.
    public let retryAfterMilliseconds: Int64
    /// Redis's clock when it answered, in ms since 1970.
    public let serverTimeMilliseconds: Int64
    /// The cooldown's nonce (which its countdown tokens carry, the key's value or its first 16
    /// characters): what a release of this cooldown publishes, so an event stream matches releases on it.
    public let cooldownIdentity: String

    public init(retryAfterMilliseconds: Int64, serverTimeMilliseconds: Int64, cooldownIdentity: String = "") {
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.serverTimeMilliseconds = serverTimeMilliseconds
        self.cooldownIdentity = cooldownIdentity
    }

    /// Whole seconds left, rounded up.
    public var retryAfter: Int64 { Decision.wholeSeconds(retryAfterMilliseconds) }
    /// When the cooldown ends, in ms since 1970.
    public var resendAtMilliseconds: Int64 { serverTimeMilliseconds + retryAfterMilliseconds }
}
