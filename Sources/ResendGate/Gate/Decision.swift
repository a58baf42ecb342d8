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
    /// Milliseconds until a send may be allowed: the longest of every limit that binds the
    /// next send (when allowed, the wait this send started).
    public internal(set) var retryAfterMilliseconds: Int64
    /// Redis's clock when it decided, in ms since 1970.
    public let serverTimeMilliseconds: Int64
    /// Sends counted in the window, this one included when allowed: at most the last
    /// `max(max sends, ladder steps, 16)`, which a window keeps.
    public let sendsInWindow: Int
    /// Sends still allowed in the window; nil when the policy sets no cap.
    public let sendsLeft: Int?
    /// The cooldown the next allowed send would start, in ms.
    public let nextRetryAfterMilliseconds: Int64
    /// The stored answer to an earlier request with this `Idempotency-Key`: nothing consumed.
    public let replayed: Bool
    /// The handle of the cooldown this decision started or ran into, for thin clients
    /// (`GET /v1/countdowns/{token}`); nil when unknown.
    public var countdownToken: CountdownToken?
    /// A test number (`GateConfiguration.testNumbers`): allowed, nothing recorded; the
    /// caller must not send a real SMS.
    public let testNumber: Bool
    /// Rules in observe mode that would have refused this send (`Policy.observe`), which
    /// was decided as if they were off.
    public internal(set) var observed: [Reason]
    /// The quota of the full counted limit (a budget, a limit written as data) or, for
    /// `too_many_requests`, the requests an address may make in the period; else nil.
    public let budgetLimit: Int?
    /// The code to send, for an allowed send (or its replay) of a purpose that issues codes.
    public internal(set) var issuedCode: IssuedCode?

    /// A decision on `request`, refused by `reason` unless nil; `wait`, `now`, `next` and
    /// `token` are `retryAfterMilliseconds`, `serverTimeMilliseconds`,
    /// `nextRetryAfterMilliseconds` and `countdownToken`.
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

    /// True when a send was allowed now: neither refused nor a replay of an earlier answer.
    var isNewSend: Bool { allowed && !replayed }

    /// The same decision with `reasons` observed too; a replay keeps the stored answer's.
    func observing(_ reasons: [Reason]) -> Decision {
        var reported = self
        if !replayed { reported.observed += reasons }
        return reported
    }

    /// At least `milliseconds` of wait: a filled limit checked apart (a cluster's IP cap).
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
    /// The cooldown's nonce, which its tokens carry and its release publishes: what an event
    /// stream matches releases on.
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
