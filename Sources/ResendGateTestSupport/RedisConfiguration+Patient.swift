import RedisClient

extension RedisConfiguration {
    /// `url` with connect and command timeouts of 20 s, for the gates of tests that are not
    /// about a slow Redis: on a loaded machine (a CI runner, a sanitizer's build) a Redis
    /// starved for over a second is not a fault, and the default 1 s made such gates answer
    /// 503 or log a failed connect. Tests of a frozen or slow Redis set their own timeouts.
    public static func patient(_ url: String) throws -> RedisConfiguration {
        try RedisConfiguration(url: url, connectTimeout: .seconds(20), commandTimeout: .seconds(20))
    }
}
