import Foundation
import GateRuntime
import PhoneNumbers

/// The anti-abuse rules for one purpose, all decided in one atomic script call
/// (except region and number type, which are facts about the number and are
/// checked before Redis is asked).
public struct Policy: Sendable, Equatable {
    /// Cooldown after a send, escalating with the sends counted in `window`; the
    /// last step repeats.
    public var ladder: [Duration]
    /// The sliding window in which sends are counted (for the ladder and `maxSends`), and
    /// refunds (for `maxRefunds`).
    public var window: Duration
    /// At most this many sends per number and purpose in `window`; nil: no cap.
    public var maxSends: Int?
    /// At most this many sends per client IP in `ipWindow`; nil: no cap.
    public var ipMaxSends: Int?
    public var ipWindow: Duration
    /// Regions (two letters) that may receive codes; nil: every region.
    public var allowedRegions: Set<String>?
    /// Line types that may receive codes: by default mobiles only, since codes sent
    /// to premium-rate or shared-cost lines are the classic toll-fraud pump.
    public var allowedNumberTypes: Set<PhoneNumberType>
    /// At most this many refunds (releases that end a running cooldown and give its
    /// send back) per number and purpose in `window`; 0 disables refunds. Each refund is
    /// recorded in the window, so refunds can reset the ladder and `maxSends` at most
    /// this many times.
    public var maxRefunds: Int
    /// Wrong codes (`failed` verifications) one sent code may have before it is locked
    /// (`lockoutScope` says what the lock blocks), so a code cannot be guessed by trying;
    /// 0: no lockout. A `failed` counts only against a code the gate let through (the
    /// number's last send in `window`); a `verified` code clears the count.
    public var maxFailedChecks: Int
    /// What `maxFailedChecks` wrong codes lock: by default that code alone, so nobody can
    /// lock someone else's number out of new codes by typing wrong ones.
    public var lockoutScope: LockoutScope
    /// How long a number stays locked after `maxFailedChecks` wrong codes (`lockoutScope`
    /// `number` only).
    public var lockout: Duration
    /// Allowed sends per destination in each budget's window: over one, `country_limit`.
    /// Keyed by region (`CN`: libphonenumber's region of the canonical number) or by calling
    /// code (`+44`: every region under it); a number may fit in both. Empty: no budget.
    public var countryMaxSends: [String: SendBudget] = [:]
    /// Allowed sends to any number in the budget's window: over it, `global_limit`.
    public var maxSendsTotal: SendBudget?
    /// Counted limits written as data (`--limit`, a policy file's `limits`), in the order
    /// they are checked, after the region's and the total budget.
    public var limits: [SendLimit] = []
    /// The rules that are not counters (`PolicyRules.kinds`) this policy sets, each as its
    /// option spells it, by the option's name (`send-hours`).
    public var ruleTexts: [String: String] = [:]
    /// Rules in observe mode (`observes(_:)`): computed and reported, never refusing.
    public var observe: Set<DecisionReason> = []
    /// The SMS-pumping guard: refuses destination prefixes whose sends do not convert
    /// into verifications (`suspected_pumping`); off unless `pumping.minSends` is set.
    public var pumping: PumpingGuard
    /// Codes the gate issues and checks itself (`IssuedCodes`); nil: the back end makes
    /// and checks codes, and reports outcomes (`POST /v1/verifications`).
    public var codes: IssuedCodes?

    /// The cooldown after a send when no ladder is set: 60 s.
    public static let defaultCooldown: Duration = .seconds(60)
    /// The window of sends and refunds: a day.
    public static let defaultWindow: Duration = .seconds(86_400)
    /// The window of `ipMaxSends`: an hour.
    public static let defaultIPWindow: Duration = .seconds(3600)
    /// One refund a window: enough for one failed SMS, too few to reset a ladder at will.
    public static let defaultMaxRefunds = 1
    /// Five wrong codes: a person mistypes a few, a guesser needs thousands.
    public static let defaultMaxFailedChecks = 5
    /// A quarter of an hour locked: a million guesses at five a lock take decades.
    public static let defaultLockout: Duration = .seconds(900)
    public static let defaultNumberTypes: Set<PhoneNumberType> = [.mobile, .fixedLineOrMobile]

    /// The most steps a cooldown ladder takes: each is written into the purpose's reserve
    /// script (`ReserveScripts`), and a ladder past a few hundred would not compile in Redis.
    public static let maxLadderSteps = 64

    /// A flat 60 s cooldown, mobiles only, no caps, one refund a day.
    public static let `default` = Policy()

    public init(
        ladder: [Duration] = [Policy.defaultCooldown], window: Duration = Policy.defaultWindow, maxSends: Int? = nil,
        ipMaxSends: Int? = nil, ipWindow: Duration = Policy.defaultIPWindow, allowedRegions: Set<String>? = nil,
        allowedNumberTypes: Set<PhoneNumberType> = Policy.defaultNumberTypes, maxRefunds: Int = Policy.defaultMaxRefunds,
        maxFailedChecks: Int = Policy.defaultMaxFailedChecks, lockout: Duration = Policy.defaultLockout,
        lockoutScope: LockoutScope = .code, pumping: PumpingGuard = PumpingGuard(), codes: IssuedCodes? = nil
    ) {
        self.codes = codes
        self.lockoutScope = lockoutScope
        self.ladder = ladder
        self.window = window
        self.maxSends = maxSends
        self.ipMaxSends = ipMaxSends
        self.ipWindow = ipWindow
        self.allowedRegions = allowedRegions
        self.allowedNumberTypes = allowedNumberTypes
        self.maxRefunds = maxRefunds
        self.maxFailedChecks = maxFailedChecks
        self.lockout = lockout
        self.pumping = pumping
    }

    /// Refuses rules that cannot work, naming the field (`where` prefixes it, such
    /// as `purposes.login.`).
    public func lint(where prefix: String = "") throws(ConfigurationError) {
        func fail(_ field: String, _ message: String) -> ConfigurationError {
            ConfigurationError(field: prefix + field, message: message)
        }
        guard !ladder.isEmpty else { throw fail("cooldown", "needs at least one duration") }
        guard ladder.count <= Self.maxLadderSteps else {
            throw fail("cooldown", "takes at most \(Self.maxLadderSteps) durations, got \(ladder.count)")
        }
        for step in ladder where step < .milliseconds(1) {
            throw fail("cooldown", "every step must be at least 1 ms, got \(step)")
        }
        guard window >= .milliseconds(1) else { throw fail("window", "must be at least 1 ms") }
        guard ipWindow >= .milliseconds(1) else { throw fail("ip-window", "must be at least 1 ms") }
        if let maxSends {
            guard maxSends >= 1 else { throw fail("max-sends", "must be at least 1, got \(maxSends)") }
            // The last allowed send comes after the cooldowns of the sends before it.
            var elapsed = Duration.zero
            for index in 0..<(maxSends - 1) { elapsed += ladder[min(index, ladder.count - 1)] }
            guard elapsed < window else {
                throw fail("max-sends", "\(maxSends) sends cannot fit into the window of \(window): the cooldowns before the last one add up to \(elapsed)")
            }
        }
        guard maxRefunds >= 0 else { throw fail("max-refunds", "must be 0 (no refunds) or more, got \(maxRefunds)") }
        guard maxFailedChecks >= 0 else { throw fail("max-failed-checks", "must be 0 (no lockout) or more, got \(maxFailedChecks)") }
        guard lockout >= .milliseconds(1) else { throw fail("lockout", "must be at least 1 ms") }
        if let ipMaxSends, ipMaxSends < 1 { throw fail("ip-max-sends", "must be at least 1, got \(ipMaxSends)") }
        if let allowedRegions, allowedRegions.isEmpty {
            throw fail("allow-regions", "needs at least one region (leave it out to allow every region)")
        }
        for region in allowedRegions ?? [] where !PhoneNumber.isKnownRegion(region) {
            throw fail("allow-regions", "\"\(region)\" is not a known region (two letters, such as CN or GB)")
        }
        guard !allowedNumberTypes.isEmpty else { throw fail("allow-number-types", "needs at least one type") }
        try lintBudgets(where: prefix)
        _ = try PolicyRules.rules(of: self, where: prefix)
        try lintObserve(where: prefix)
        try pumping.lint(where: prefix)
        if let codes {
            try codes.lint(where: prefix)
            // Wrong checks per code are what bound a guesser: issued codes always have them.
            guard (1...IssuedCodes.maximumWrongChecks).contains(maxFailedChecks) else {
                throw fail(
                    "max-failed-checks",
                    "must be 1 to \(IssuedCodes.maximumWrongChecks) when the gate issues codes (wrong checks per code bound a guesser), got \(maxFailedChecks)")
            }
        }
    }
}

extension Policy {
    /// Reads `60`, `60s`, `5m` or a ladder `60,120,300` into `ladder`.
    public static func parseLadder(_ text: String, field: String = "cooldown") throws(ConfigurationError) -> [Duration] {
        try text.split(separator: ",", omittingEmptySubsequences: false).map { part throws(ConfigurationError) in
            try DurationParser.parse(String(part), field: field)
        }
    }

    /// Reads `CN,GB` into upper-case region codes.
    public static func parseRegions(_ text: String) -> Set<String> {
        Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }.filter { !$0.isEmpty })
    }

    /// Reads `mobile,fixed_line_or_mobile` into number types, naming an unknown one.
    public static func parseNumberTypes(_ text: String, field: String = "allow-number-types") throws(ConfigurationError) -> Set<PhoneNumberType> {
        try parseNames(text, field: field, naming: "a number type")
    }

    /// Reads comma-separated raw values of `Value`; one that is none is refused as not
    /// `naming`, with the known ones.
    static func parseNames<Value: RawRepresentable<String> & CaseIterable & Hashable>(
        _ text: String, field: String, naming: String
    ) throws(ConfigurationError) -> Set<Value> {
        var values: Set<Value> = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let value = Value(rawValue: name) else {
                let known = Value.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(field: field, message: "\"\(name)\" is not \(naming) (one of \(known))")
            }
            values.insert(value)
        }
        return values
    }
}
