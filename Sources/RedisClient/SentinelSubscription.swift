import GateEventLoop
/// Listens on one Sentinel at a time for `+switch-master` (a failover finished) and
/// reports the new master of `master`. Confined to its loop.
///
/// A `RedisChannelSubscription` underneath: the same reconnect with backoff, moving to
/// the next Sentinel after any failure (a refused or timed-out connect included), and the
/// same connect timeout. Sentinels get no password, as in `SentinelResolver`.
final class SentinelSubscription {
    private var channel: RedisChannelSubscription?

    init(loop: EventLoop, sentinels: [RedisConfiguration.HostPort], master: String, timeouts: RedisConfiguration,
         onSwitch: @escaping (RedisConfiguration.HostPort) -> Void) {
        channel = RedisChannelSubscription(
            loop: loop, channel: "+switch-master", configuration: timeouts.forSentinels,
            endpoint: { attempt in
                let sentinel = sentinels[attempt % sentinels.count]
                return .tcp(host: sentinel.host, port: sentinel.port)
            },
            onMessage: { payload in
                if let newMaster = Self.newMaster(of: master, in: payload) { onSwitch(newMaster) }
            },
            onSubscribed: {})
    }

    deinit {
        close()
    }

    func close() {
        channel?.close()
        channel = nil
    }

    /// The new master in `<name> <old ip> <old port> <new ip> <new port>`, when the
    /// message is about `master`.
    static func newMaster(of master: String, in payload: [UInt8]) -> RedisConfiguration.HostPort? {
        let fields = String(decoding: payload, as: UTF8.self).split(separator: " ")
        guard fields.count == 5, fields[0] == master, let port = Int(fields[4]) else { return nil }
        return RedisConfiguration.HostPort(host: String(fields[3]), port: port)
    }
}
