import RedisClient
import ResendGate

/// What every worker may read about all of them: their metrics and Redis health,
/// for `/metrics` and `/readyz`. Filled once before serving starts.
final class SharedState: Sendable {
    let workerMetrics: [WorkerMetrics]
    let redis: [RedisStatistics]
    /// The API keys as bytes, with their scopes and the caller identity their idempotency
    /// keys belong to; empty: no authentication.
    let apiKeys: [(secret: [UInt8], scopes: APIScopes, caller: String)]

    init(metrics: [WorkerMetrics], redis: [RedisStatistics], apiKeys: [APIKey]) {
        workerMetrics = metrics
        self.redis = redis
        self.apiKeys = apiKeys.map { (Array($0.secret.utf8), $0.scopes, SendRequest.callerIdentity(apiKey: $0.secret)) }
    }

    var redisReady: Bool { redis.allSatisfy(\.isReady) }

    /// Why sends are refused because Redis may evict keys (a worker's first reason), or nil.
    var evictionRefusal: String? { redis.lazy.compactMap(\.evictionRefusal).first }
}
