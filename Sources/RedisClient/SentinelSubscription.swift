import CHiredis
import CRedisEvents

/// Listens on one Sentinel at a time for `+switch-master` (a failover finished) and
/// reports the new master of `master`. Reconnects, moving to the next Sentinel, when
/// the one it listens to goes away. Confined to its loop.
///
/// A subscription's replies never end, so it keeps its own hiredis context rather
/// than a `RedisConnection`, whose replies answer one command each.
final class SentinelSubscription {
    private let loop: EventLoop
    private let sentinels: [RedisConfiguration.HostPort]
    private let master: String
    private let onSwitch: (RedisConfiguration.HostPort) -> Void
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var index = 0
    private var closed = false
    private lazy var retryTimer = EventTimer(loop: loop) { [unowned self] in self.subscribe() }

    init(loop: EventLoop, sentinels: [RedisConfiguration.HostPort], master: String,
         onSwitch: @escaping (RedisConfiguration.HostPort) -> Void) {
        self.loop = loop
        self.sentinels = sentinels
        self.master = master
        self.onSwitch = onSwitch
        subscribe()
    }

    deinit {
        close()
    }

    func close() {
        closed = true
        retryTimer.cancel()
        if let context {
            self.context = nil
            context.pointee.data = nil
            redisAsyncFree(context)
        }
    }

    private func subscribe() {
        guard !closed, context == nil else { return }
        let sentinel = sentinels[index % sentinels.count]
        guard let created = redisAsyncConnect(sentinel.host, Int32(sentinel.port)) else { return lost() }
        guard created.pointee.err == 0, rg_redis_attach(created, loop.base) == 0 else {
            redisAsyncFree(created)
            return lost()
        }
        context = created
        created.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        redisAsyncSetDisconnectCallback(created) { context, _ in
            guard let data = context?.pointee.data else { return }
            let subscription = Unmanaged<SentinelSubscription>.fromOpaque(data).takeUnretainedValue()
            subscription.context = nil
            subscription.lost()
        }
        let words = ["SUBSCRIBE", "+switch-master"]
        var lengths = words.map { $0.utf8.count }
        let status = words[0].withCString { first in
            words[1].withCString { second in
                var argv: [UnsafePointer<CChar>?] = [first, second]
                return redisAsyncCommandArgv(created, { context, reply, _ in
                    guard let data = context?.pointee.data, let reply else { return }
                    Unmanaged<SentinelSubscription>.fromOpaque(data).takeUnretainedValue()
                        .message(RedisReply(reply.assumingMemoryBound(to: redisReply.self)))
                }, nil, 2, &argv, &lengths)
            }
        }
        if status != REDIS_OK { lost() }
    }

    /// `["message", "+switch-master", "<name> <old ip> <old port> <new ip> <new port>"]`.
    private func message(_ reply: RedisReply) {
        guard case .array(let items) = reply, items.count == 3, items[0].string == "message",
              let text = items[2].string else { return }
        let fields = text.split(separator: " ")
        guard fields.count == 5, fields[0] == master, let port = Int(fields[4]) else { return }
        onSwitch(RedisConfiguration.HostPort(host: String(fields[3]), port: port))
    }

    private func lost() {
        guard !closed else { return }
        if let context {
            self.context = nil
            context.pointee.data = nil
            redisAsyncFree(context)
        }
        index += 1
        retryTimer.schedule(after: .milliseconds(500))
    }
}
