import CHiredis
import GateEventLoop

/// One asynchronous hiredis connection on an `EventLoop`, confined to that loop.
///
/// Commands from any number of callers pipeline on it. It connects at creation,
/// authenticates, selects the database and loads the scripts, and after any failure
/// reconnects with backoff. While it has no connection, commands fail at once as
/// `unavailable` instead of waiting: the caller answers "store unavailable" rather
/// than hang. A command whose reply does not come within the command timeout fails
/// as `timeout`, and the connection is dropped and made anew, since a late reply
/// could no longer be matched to its command.
public final class RedisConnection {
    /// Where the connection stands.
    public enum State: String, Sendable {
        case connecting, ready, waitingToReconnect, closed
    }

    public typealias Completion = (Result<RedisReply, RedisError>) -> Void

    struct Pending {
        let deadline: ContinuousClock.Instant
        let completion: Completion
        /// For a script call: how to write its arguments again after `NOSCRIPT`.
        let retry: (script: RedisScript, build: (inout RedisArguments) -> Void)?
    }

    let loop: EventLoop
    let configuration: RedisConfiguration
    let scripts: [RedisScript]
    var context: UnsafeMutablePointer<redisAsyncContext>?
    /// Bumped for each new hiredis context, so callbacks of a dropped one are ignored.
    var generation: UInt = 1
    var pending = FIFO<Pending>()
    var handshakeRepliesLeft = 0
    /// While the handshake's first steps are answered, the commands callers send wait here
    /// (written out), to follow the scripts (RedisConnection+Lifecycle.swift, `sendHandshake`).
    var held: [(command: [UInt8], entry: Pending)] = []
    var holding = false
    /// The command being written (reused for every command).
    var arguments = RedisArguments()
    /// The command in Redis's protocol, reused for every command.
    var formatted: [UInt8] = []
    var backoff: Duration
    lazy var deadlineTimer = EventTimer(loop: loop) { [unowned self] in self.checkDeadlines() }
    lazy var reconnectTimer = EventTimer(loop: loop) { [unowned self] in self.connect() }
    lazy var sentinelTimer = EventTimer(loop: loop) { [unowned self] in self.watchSentinels() }
    /// With Sentinels: who asks them, and the master they named last.
    var sentinel: SentinelResolver?
    var switchWatch: SentinelSubscription?
    var sentinelMaster: RedisConfiguration.HostPort?
    lazy var connectTimer = EventTimer(loop: loop) { [unowned self] in
        self.drop(RedisError(.timeout, "could not connect to Redis within \(self.configuration.connectTimeout)"))
    }

    /// Where the connection stands now.
    public internal(set) var state: State = .connecting {
        didSet {
            guard state != oldValue else { return }
            statistics.setReady(state == .ready)
            onStateChange?(state)
        }
    }
    /// Called on the loop whenever `state` changes (for readiness and metrics).
    public var onStateChange: ((State) -> Void)?
    /// The last reason the connection failed, for messages and logs.
    public internal(set) var lastError: RedisError?
    /// Health counters, readable from any thread.
    public let statistics = RedisStatistics()
    /// Reconnects, master switches and script reloads go here (never a phone number).
    let logger: GateLogger
    /// Attempts that failed since the connection was last ready, for the log.
    var failedAttempts = 0
    /// Script reloads: when one was last logged, and how many came since unlogged.
    var scriptReloadLogged: ContinuousClock.Instant?
    var scriptReloadsUnlogged = 0
    /// With Sentinels: the last master they named, kept across reconnects to log a switch.
    var lastNamedMaster: RedisConfiguration.HostPort?
    /// Redis's clock as this connection reckons it (RedisConnection+Clock.swift).
    var clock = RedisClock()
    /// Set while Redis may evict keys and that is not allowed: what `send` and `evaluate`
    /// fail with (RedisConnection+Eviction.swift).
    var evictionRefusal: RedisError?
    /// The `maxmemory-policy` read last, kept across reconnects to log a change once.
    var evictionPolicySeen: String?
    /// Called on the loop after each reading of the policy (a cluster sums its masters').
    var onEvictionChange: (() -> Void)?
    lazy var evictionTimer = EventTimer(loop: loop) { [unowned self] in self.checkEviction() }

    /// Creates the connection and starts connecting. Call on `loop`'s thread. `logger`
    /// hears of reconnects, Sentinel master switches and script reloads.
    public init(loop: EventLoop, configuration: RedisConfiguration, scripts: [RedisScript], logger: GateLogger = .off) {
        self.loop = loop
        self.configuration = configuration
        self.scripts = scripts
        self.logger = logger
        backoff = configuration.reconnectBackoff.lowerBound
        connect()
    }

    deinit {
        close()
    }

    /// Sends one command; `completion` runs on the loop with its reply. Fails at once as
    /// `evicting` while Redis may evict keys and that is not allowed (as last read: through
    /// a reconnect too, until the new connection's handshake reads it again).
    public func send(_ build: (inout RedisArguments) -> Void, completion: @escaping Completion) {
        if let evictionRefusal { return completion(.failure(evictionRefusal)) }
        sendRegardless(build, completion: completion)
    }

    /// Sends one command even while Redis may evict keys: for the client's own upkeep
    /// (a cluster's slot map, a readiness `PING`), which writes no key.
    func sendRegardless(_ build: (inout RedisArguments) -> Void, completion: @escaping Completion) {
        guard let context, state == .ready || state == .connecting else {
            return completion(.failure(lastError ?? RedisError(.unavailable, "not connected to Redis")))
        }
        arguments.reset()
        build(&arguments)
        enqueue(context, Pending(deadline: .now + configuration.commandTimeout, completion: completion, retry: nil))
    }

    /// Calls `script` with `EVALSHA`; the arguments start with the key count.
    /// If Redis lost the script (`SCRIPT FLUSH`, a restart), it is loaded again and
    /// the call retried once.
    public func evaluate(
        _ script: RedisScript, _ build: @escaping (inout RedisArguments) -> Void, completion: @escaping Completion
    ) {
        if let evictionRefusal { return completion(.failure(evictionRefusal)) }
        guard let context, state == .ready || state == .connecting else {
            return completion(.failure(lastError ?? RedisError(.unavailable, "not connected to Redis")))
        }
        writeEvaluate(script, build)
        enqueue(context, Pending(
            deadline: .now + configuration.commandTimeout, completion: completion, retry: (script, build)))
        readClockIfDue()
    }

    /// Writes `EVALSHA` of `script` with its arguments, and Redis's clock as this
    /// connection reckons it now for `appendRedisNow`.
    private func writeEvaluate(_ script: RedisScript, _ build: (inout RedisArguments) -> Void) {
        arguments.reset()
        arguments.redisNowMilliseconds = redisNowMilliseconds()
        arguments.append("EVALSHA", script.sha1)
        build(&arguments)
    }

    /// Closes the connection for good; pending commands fail as unavailable.
    public func close() {
        guard state != .closed else { return }
        state = .closed
        reconnectTimer.cancel()
        evictionTimer.cancel()
        sentinel?.close()
        switchWatch?.close()
        drop(RedisError(.unavailable, "the connection was closed"))
    }

    // MARK: - Sending

    func enqueue(_ context: UnsafeMutablePointer<redisAsyncContext>, _ entry: Pending) {
        arguments.writeRESP(into: &formatted)
        if holding { return held.append((formatted, entry)) }
        enqueueFormatted(context, entry)
    }

    /// Hands `formatted`, a command in Redis's protocol, to hiredis.
    func enqueueFormatted(_ context: UnsafeMutablePointer<redisAsyncContext>, _ entry: Pending) {
        // hiredis looks one byte past a one-argument command (for a next "$"): a NUL
        // ends the buffer, as its own formatter's sds strings do.
        formatted.append(0)
        let status = formatted.withUnsafeBytes { command in
            redisAsyncFormattedCommand(
                context, redisReplyThunk, UnsafeMutableRawPointer(bitPattern: generation),
                command.baseAddress?.assumingMemoryBound(to: CChar.self), command.count - 1)
        }
        guard status == REDIS_OK else {
            return entry.completion(.failure(RedisError(.unavailable, "hiredis refused the command (connection closing)")))
        }
        pending.append(entry)
        if !deadlineTimer.isScheduled { deadlineTimer.schedule(after: configuration.commandTimeout) }
    }

    private func checkDeadlines() {
        guard let oldest = pending.first else { return }
        let now = ContinuousClock.now
        if oldest.deadline <= now {
            drop(RedisError(.timeout, "Redis did not answer within \(configuration.commandTimeout)"))
        } else {
            deadlineTimer.schedule(after: oldest.deadline - now)
        }
    }

    // MARK: - Replies

    func handleReply(_ reply: UnsafeMutableRawPointer?) {
        guard let entry = pending.popFirst() else { return }
        guard let reply else {
            // hiredis hands out no reply only when the connection is going away.
            return entry.completion(.failure(lastError ?? RedisError(.unavailable, "the connection to Redis was lost")))
        }
        let value = RedisReply(reply.assumingMemoryBound(to: redisReply.self))
        if case .error(let message) = value {
            statistics.recordError()
            if message.hasPrefix("NOSCRIPT"), let retry = entry.retry, let context {
                // Load the script again, then retry once: replies keep their order,
                // so the load runs before the retried call.
                logScriptReload(retry.script)
                arguments.reset()
                arguments.append("SCRIPT", "LOAD", retry.script.source)
                enqueue(context, Pending(deadline: .now + configuration.commandTimeout, completion: { _ in }, retry: nil))
                writeEvaluate(retry.script, retry.build)
                return enqueue(context, Pending(deadline: entry.deadline, completion: entry.completion, retry: nil))
            }
            return entry.completion(.failure(RedisError(.server, message)))
        }
        entry.completion(.success(value))
    }
}

/// hiredis's reply callback: privdata carries the generation of the context that sent
/// the command, so a reply (or a failure) of a dropped context is ignored.
let redisReplyThunk: @convention(c) (UnsafeMutablePointer<redisAsyncContext>?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { context, reply, privdata in
    guard let data = context?.pointee.data else { return }
    let connection = Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
    guard UInt(bitPattern: privdata) == connection.generation else { return }
    connection.handleReply(reply)
}
