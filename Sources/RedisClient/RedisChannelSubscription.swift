import CHiredis
import CRedisEvents
import GateEventLoop

/// Listens to one Redis pub/sub channel on a connection of its own (a subscribed
/// connection can send nothing else) and hands each message to `onMessage`. Confined
/// to its loop, so messages arrive on the loop that owns what they concern.
///
/// It authenticates like the main connection, reconnects after any failure with the
/// same backoff (`reconnectBackoff`, doubling, jittered), and gives up a connection
/// that is not subscribed within the connect timeout. `onSubscribed` runs each time the
/// subscription is (again) in place: messages published while it was down are lost, so
/// the owner re-checks then what it follows.
package final class RedisChannelSubscription {
    private let loop: EventLoop
    private let channel: String
    private let configuration: RedisConfiguration
    /// Where to subscribe on the `attempt`-th try; nil: not known yet (try again later).
    private let endpoint: (_ attempt: Int) -> RedisConfiguration.Endpoint?
    private let onMessage: ([UInt8]) -> Void
    private let onSubscribed: () -> Void
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    /// Bumped for each new context, so callbacks of a dropped one are ignored.
    private var generation: UInt = 1
    private var attempt = 0
    private var backoff: Duration
    private var closed = false
    /// True while the subscription is in place.
    private(set) var isSubscribed = false
    private lazy var retryTimer = EventTimer(loop: loop) { [unowned self] in self.connect() }
    private lazy var connectTimer = EventTimer(loop: loop) { [unowned self] in self.lost() }

    init(loop: EventLoop, channel: String, configuration: RedisConfiguration,
         endpoint: @escaping (_ attempt: Int) -> RedisConfiguration.Endpoint?,
         onMessage: @escaping ([UInt8]) -> Void, onSubscribed: @escaping () -> Void) {
        self.loop = loop
        self.channel = channel
        self.configuration = configuration
        self.endpoint = endpoint
        self.onMessage = onMessage
        self.onSubscribed = onSubscribed
        backoff = configuration.reconnectBackoff.lowerBound
        connect()
    }

    deinit {
        close()
    }

    /// Unsubscribes for good.
    package func close() {
        guard !closed else { return }
        closed = true
        retryTimer.cancel()
        connectTimer.cancel()
        release()
    }

    private func connect() {
        guard !closed, context == nil else { return }
        let created: UnsafeMutablePointer<redisAsyncContext>?
        switch endpoint(attempt) {
        case .tcp(let host, let port)?: created = redisAsyncConnect(host, Int32(port))
        case .unix(let path)?: created = redisAsyncConnectUnix(path)
        default: return lost()
        }
        guard let created else { return lost() }
        guard created.pointee.err == 0, rg_redis_attach(created, loop.base) == 0 else {
            redisAsyncFree(created)
            return lost()
        }
        // A subscription only listens: TCP keepalive finds a peer that vanished silently.
        _ = redisEnableKeepAlive(&created.pointee.c)
        generation &+= 1
        context = created
        created.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        // hiredis frees a context whose connect failed, right after this callback.
        redisAsyncSetConnectCallback(created) { context, status in
            if status != REDIS_OK { RedisChannelSubscription.freed(context) }
        }
        redisAsyncSetDisconnectCallback(created) { context, _ in RedisChannelSubscription.freed(context) }
        connectTimer.schedule(after: configuration.connectTimeout)
        if let password = configuration.password {
            command(["AUTH"] + (configuration.username.map { [$0] } ?? []) + [password], on: created)
        }
        command(["SUBSCRIBE", channel], on: created)
    }

    /// hiredis is freeing `context` (a failed connect, a disconnect): forget it, try again later.
    private static func freed(_ context: UnsafePointer<redisAsyncContext>?) {
        guard let data = context?.pointee.data else { return }
        let subscription = Unmanaged<RedisChannelSubscription>.fromOpaque(data).takeUnretainedValue()
        subscription.context?.pointee.data = nil
        subscription.context = nil
        subscription.lost()
    }

    /// Sends `words`; every reply (the AUTH answer, the subscription's confirmation and
    /// messages) comes to `received`.
    private func command(_ words: [String], on context: UnsafeMutablePointer<redisAsyncContext>) {
        var arguments = RedisArguments()
        for word in words { arguments.append(word) }
        var formatted: [UInt8] = []
        arguments.writeRESP(into: &formatted)
        formatted.append(0)  // as `RedisConnection.enqueueFormatted` does
        let status = formatted.withUnsafeBytes { command in  // hiredis copies the command
            redisAsyncFormattedCommand(context, { context, reply, privdata in
                guard let data = context?.pointee.data, let reply else { return }
                let subscription = Unmanaged<RedisChannelSubscription>.fromOpaque(data).takeUnretainedValue()
                guard UInt(bitPattern: privdata) == subscription.generation else { return }
                subscription.received(RedisReply(reply.assumingMemoryBound(to: redisReply.self)))
            }, UnsafeMutableRawPointer(bitPattern: generation),
            command.baseAddress?.assumingMemoryBound(to: CChar.self), command.count - 1)
        }
        if status != REDIS_OK { lost() }
    }

    private func received(_ reply: RedisReply) {
        switch reply {
        case .array(let items) where items.count == 3 && items[0].string == "message":
            if case .bulk(let payload) = items[2] { onMessage(payload) }
        case .array(let items) where items.first?.string == "subscribe":
            connectTimer.cancel()
            backoff = configuration.reconnectBackoff.lowerBound
            isSubscribed = true
            onSubscribed()
        case .error:
            lost()  // AUTH refused, or SUBSCRIBE before it: try again later
        default:
            break  // AUTH's OK
        }
    }

    /// Drops the connection (if any) and tries again after the backoff, at the next
    /// endpoint (a cluster's next seed).
    private func lost() {
        isSubscribed = false
        connectTimer.cancel()
        release()
        guard !closed else { return }
        attempt &+= 1
        let jittered = backoff * Double.random(in: 0.5...1.0)
        backoff = min(backoff * 2, configuration.reconnectBackoff.upperBound)
        retryTimer.schedule(after: jittered)
    }

    private func release() {
        generation &+= 1
        if let context {
            self.context = nil
            context.pointee.data = nil
            redisAsyncFree(context)
        }
    }
}
