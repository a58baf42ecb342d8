import Foundation

/// Everything a gate needs to decide: where Redis is, the cooldown policy, and the
/// default region for numbers written without a country code.
public struct GateConfiguration: Sendable {
    public var redis: RedisConfiguration
    public var policy: CooldownPolicy
    /// Two letters (`CN`); nil means every number must carry its country code.
    public var defaultRegion: String?
    /// Prepended to every Redis key, so several deployments can share a database.
    public var keyPrefix: String
    /// The wall clock, in ms since 1970, for `server_time` and `resend_at` only:
    /// remaining times always come from Redis. Injectable for tests.
    public var wallClock: @Sendable () -> Int64

    public init(
        redis: RedisConfiguration,
        policy: CooldownPolicy = .default,
        defaultRegion: String? = nil,
        keyPrefix: String = "rg",
        wallClock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    ) throws(ConfigurationError) {
        if let region = defaultRegion, !PhoneNumber.isKnownRegion(region) {
            throw ConfigurationError(field: "region", message: "\"\(region)\" is not a known region (two letters, such as CN or GB)")
        }
        self.redis = redis
        self.policy = policy
        self.defaultRegion = defaultRegion
        self.keyPrefix = keyPrefix
        self.wallClock = wallClock
    }
}
