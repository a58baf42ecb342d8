import GateRuntime
import RedisClient

/// Everything a gate needs to decide: where Redis is, the policies, and the
/// default region for numbers written without a country code.
public struct GateConfiguration: Sendable {
    public var redis: RedisConfiguration
    /// The rules of each purpose.
    public var policies: PolicySet
    /// Two letters (`CN`); nil means every number must carry its country code.
    public var defaultRegion: String?
    /// Prepended to every Redis key, so several deployments can share a database.
    public var keyPrefix: String
    /// With a secret, Redis keys hold an HMAC-SHA256 of the number: a dump lists no numbers.
    public var keySecret: String?
    /// The secret countdown tokens are sealed with, shared by every gate of a deployment;
    /// nil: one kept in Redis, which the first gate creates (`<prefix>:token-secret`).
    public var tokenSecret: String?
    /// The secret issued codes are sealed with (`CodeSealer`), shared by every gate and never
    /// kept in Redis, so a dump reveals no live code. Required when a purpose issues codes.
    public var codeSecret: String?
    /// The code test numbers get for a purpose that issues codes (app-store review); nil: none.
    public var testCode: String?
    /// How long an `Idempotency-Key` answer is kept.
    public var idempotencyLifetime: Duration
    /// After each allowed reservation, wait until this many replicas have it (`WAIT`), so a
    /// failover cannot forget it; too few in time: store unavailable, never allowed.
    public var waitReplicas: Int
    /// Numbers that skip every limit and are never recorded (CI, QA): `TestNumbers`.
    public var testNumbers: TestNumbers
    /// A policy with a window keeps a running cooldown in its window key (`WindowCooldowns`):
    /// one key and one write fewer per send. Off by default: every gate must read that layout
    /// before any gate writes it, as older versions fail on it.
    public var cooldownsInWindows: Bool
    /// How often gates tell each other which purposes' cooldowns they keep in window keys
    /// (`WindowCooldowns`); the same on every gate: only tests change it.
    public var windowCooldownsPeriod: Duration
    /// At most this many requests per client address (IPv6 per /64) in the period, allowed
    /// or not, counted in memory before Redis (`RequestLimiter`): over it, `too_many_requests`.
    public var ipMaxRequests: RequestRate? = nil
    /// The wall clock (ms since 1970) of rules decided in memory: a test moves it.
    public var wallClock: @Sendable () -> Int64 = { Decision.wallClockMilliseconds() }

    /// The prefix of every Redis key.
    public static let defaultKeyPrefix = "rg"
    /// How long an idempotent answer is kept: a day, longer than any client retries.
    public static let defaultIdempotencyLifetime: Duration = .seconds(86_400)
    /// No `WAIT`: a single Redis, or a failover may forget the last sends.
    public static let defaultWaitReplicas = 0
    /// How often gates tell each other where they keep cooldowns (`windowCooldownsPeriod`).
    public static let defaultWindowCooldownsPeriod: Duration = .seconds(5)
    /// How many replicas `waitReplicas` may name.
    public static let waitReplicasRange = 0...16

    public init(
        redis: RedisConfiguration,
        policies: PolicySet = PolicySet(),
        defaultRegion: String? = nil,
        keyPrefix: String = GateConfiguration.defaultKeyPrefix,
        keySecret: String? = nil,
        tokenSecret: String? = nil,
        idempotencyLifetime: Duration = GateConfiguration.defaultIdempotencyLifetime,
        waitReplicas: Int = GateConfiguration.defaultWaitReplicas,
        testNumbers: TestNumbers = .none,
        cooldownsInWindows: Bool = false,
        codeSecret: String? = nil,
        testCode: String? = nil
    ) throws(ConfigurationError) {
        guard Self.waitReplicasRange.contains(waitReplicas) else {
            throw ConfigurationError(
                field: "wait-replicas", message: "must be \(Self.waitReplicasRange.lowerBound) to \(Self.waitReplicasRange.upperBound)")
        }
        if let region = defaultRegion, !PhoneNumber.isKnownRegion(region) {
            throw ConfigurationError(field: "region", message: "\"\(region)\" is not a known region (two letters, such as CN or GB)")
        }
        guard !keyPrefix.isEmpty, keyPrefix.utf8.count <= 64, !keyPrefix.contains(where: { $0 == "{" || $0 == "}" || $0 == " " }) else {
            throw ConfigurationError(field: "key-prefix", message: "must be 1 to 64 characters without braces or spaces")
        }
        try Self.checkSecret(keySecret, field: "key-secret")
        try Self.checkSecret(tokenSecret, field: "token-secret")
        try policies.lint()
        try Self.checkSecret(codeSecret, field: "code-secret")
        let issuing = policies.configuredPurposes.filter { (policies.purposes[$0] ?? policies.fallback).codes != nil }.sorted()
        if codeSecret == nil, !issuing.isEmpty {
            throw ConfigurationError(
                field: "code-secret",
                message: "purpose \(issuing.joined(separator: ", ")) issues codes: give the secret they are sealed with (the same on every gate, never kept in Redis)")
        }
        if let testCode, !IssuedCodes.isWellFormed(Substring(testCode)) {
            throw ConfigurationError(field: "test-code", message: "must be 4 to 10 digits")
        }
        self.redis = redis
        self.policies = policies
        self.defaultRegion = defaultRegion
        self.keyPrefix = keyPrefix
        self.keySecret = keySecret
        self.tokenSecret = tokenSecret
        self.codeSecret = codeSecret
        self.testCode = testCode
        self.idempotencyLifetime = idempotencyLifetime
        self.waitReplicas = waitReplicas
        self.testNumbers = testNumbers
        self.cooldownsInWindows = cooldownsInWindows
        windowCooldownsPeriod = Self.defaultWindowCooldownsPeriod
    }

    private static func checkSecret(_ secret: String?, field: String) throws(ConfigurationError) {
        if let secret, secret.utf8.count < 16 { throw ConfigurationError(field: field, message: "must be at least 16 characters") }
    }
}
