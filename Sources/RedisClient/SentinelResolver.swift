import GateEventLoop
/// Asks Redis Sentinels which node is the master of a monitored set, one Sentinel at
/// a time, moving to the next when one fails. Loop-confined.
final class SentinelResolver {
    private let sentinels: [RedisConfiguration.HostPort]
    private let master: String
    private let template: RedisConfiguration
    private let loop: EventLoop
    private var index = 0
    private var connection: RedisConnection?

    init(loop: EventLoop, sentinels: [RedisConfiguration.HostPort], master: String, timeouts: RedisConfiguration) {
        self.loop = loop
        self.sentinels = sentinels
        self.master = master
        template = timeouts.forSentinels  // and no scripts
    }

    /// The current master's address, as `SENTINEL get-master-addr-by-name` answers it.
    func resolve(_ completion: @escaping (Result<RedisConfiguration.HostPort, RedisError>) -> Void) {
        let sentinel = sentinels[index % sentinels.count]
        if connection == nil {
            connection = RedisConnection(
                loop: loop, configuration: template.with(endpoint: .tcp(host: sentinel.host, port: sentinel.port)), scripts: [])
        }
        let master = self.master
        connection!.send({ $0.append("SENTINEL", "get-master-addr-by-name", master) }, completion: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.array(let items)) where items.count == 2:
                if let host = items[0].string, let port = items[1].string.flatMap(Int.init) {
                    completion(.success(RedisConfiguration.HostPort(host: host, port: port)))
                } else {
                    completion(.failure(RedisError(.protocolViolation, "Sentinel \(sentinel) gave a malformed address")))
                }
            case .success(.null):
                completion(.failure(RedisError(.unavailable, "Sentinel \(sentinel) does not monitor a master named \(master)")))
            case .success(let other):
                completion(.failure(RedisError(.protocolViolation, "Sentinel \(sentinel) answered \(other)")))
            case .failure(let error):
                // Try the next Sentinel next time.
                self.connection?.close()
                self.connection = nil
                self.index += 1
                completion(.failure(RedisError(error.kind, "Sentinel \(sentinel): \(error.message)")))
            }
        })
    }

    func close() {
        connection?.close()
        connection = nil
    }
}
