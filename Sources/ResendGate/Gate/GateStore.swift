import GateRuntime
import RedisClient

/// What the rules need of the store, and nothing more, so another store (or a test's table
/// of replies) plugs in without touching the rules. `RedisStore` is the store. Confined to
/// the worker's loop.
public protocol GateStore: AnyObject {
    /// True when one call may only touch keys of one slot (Redis Cluster).
    var isCluster: Bool { get }
    /// Readiness, errors and reconnects, readable from any thread (`/readyz`, `/metrics`).
    var statistics: RedisStatistics { get }
    /// Whether the store answers now.
    func ping(_ completion: @escaping (Bool) -> Void)
    /// Calls `script` where `slotKey`'s slot lives.
    func evaluate(
        _ script: RedisScript, slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping (Result<RedisReply, RedisError>) -> Void)
    /// Sends one command where `slotKey`'s slot lives.
    func send(
        slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping (Result<RedisReply, RedisError>) -> Void)
    /// Follows a channel (the releases every gate announces); nil when the store has none.
    func follow(channel: String, onMessage: @escaping ([UInt8]) -> Void, onSubscribed: @escaping () -> Void) -> (any ChannelFollowing)?
    /// Stops; calls still pending fail.
    func close()
}

/// A followed channel, closed when no longer wanted.
public protocol ChannelFollowing: AnyObject {
    func close()
}

extension RedisChannelSubscription: ChannelFollowing {}

extension RedisStore: GateStore {
    public func follow(
        channel: String, onMessage: @escaping ([UInt8]) -> Void, onSubscribed: @escaping () -> Void
    ) -> (any ChannelFollowing)? {
        subscribe(channel: channel, onMessage: onMessage, onSubscribed: onSubscribed)
    }
}
