import CHiredis
import CRedisEvents

// MARK: - Connecting, handshake, dropping and reconnecting

extension RedisConnection {
    func connect() {
        guard state != .closed else { return }
        state = .connecting
        let created: UnsafeMutablePointer<redisAsyncContext>?
        switch configuration.endpoint {
        case .tcp(let host, let port):
            created = redisAsyncConnect(host, Int32(port))
        case .unix(let path):
            created = redisAsyncConnectUnix(path)
        case .sentinel:
            guard let master = sentinelMaster else { return resolveMasterThenConnect() }
            created = redisAsyncConnect(master.host, Int32(master.port))
        case .cluster:
            preconditionFailure("a cluster is served by RedisClusterClient, one connection per node")
        }
        guard let created else {
            return scheduleReconnect(after: RedisError(.unavailable, "could not create a Redis connection (out of memory)"))
        }
        if created.pointee.err != 0 {
            let message = created.pointee.errstr.map { String(cString: $0) } ?? "unknown error"
            redisAsyncFree(created)
            return scheduleReconnect(after: RedisError(.unavailable, "cannot connect to Redis: \(message)"))
        }
        guard rg_redis_attach(created, loop.base) == 0 else {
            redisAsyncFree(created)
            return scheduleReconnect(after: RedisError(.unavailable, "could not watch the Redis connection (out of memory)"))
        }
        generation &+= 1
        context = created
        created.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        redisAsyncSetConnectCallback(created, redisConnectThunk)
        redisAsyncSetDisconnectCallback(created, redisDisconnectThunk)
        connectTimer.schedule(after: configuration.connectTimeout)
        sendHandshake(created)
    }

    /// With Sentinels: asks them for the master's address, then connects to it.
    private func resolveMasterThenConnect() {
        guard case .sentinel(let sentinels, let name) = configuration.endpoint else { return }
        if sentinel == nil {
            sentinel = SentinelResolver(loop: loop, sentinels: sentinels, master: name, timeouts: configuration)
            switchWatch = SentinelSubscription(
                loop: loop, sentinels: sentinels, master: name, timeouts: configuration
            ) { [unowned self] master in
                self.masterSwitched(to: master)
            }
        }
        connectTimer.schedule(after: configuration.connectTimeout)
        sentinel!.resolve { [unowned self] result in
            guard self.state == .connecting, self.context == nil else { return }
            switch result {
            case .success(let master):
                self.noteMaster(master)
                self.connect()
            case .failure(let error):
                self.connectTimer.cancel()
                self.scheduleReconnect(after: RedisError(.unavailable, "cannot find the master: \(error.message)"))
            }
        }
    }

    /// A Sentinel announced `+switch-master`: the connection is made anew to the new master.
    func masterSwitched(to master: RedisConfiguration.HostPort) {
        guard master != sentinelMaster else { return }
        let previous = sentinelMaster.map(\.description) ?? "none"
        noteMaster(master)
        if state == .ready || state == .connecting {
            drop(RedisError(.unavailable, "the Sentinels moved the master from \(previous) to \(master)"))
        }
    }

    /// With Sentinels: besides listening for `+switch-master`, asks again every second
    /// which node is the master (a switch announced while no Sentinel was listened to,
    /// or one that demoted the node quietly); when they name another one, the
    /// connection is made anew to it.
    func watchSentinels() {
        guard state == .ready, sentinel != nil else { return }
        sentinel!.resolve { [unowned self] result in
            guard self.state == .ready else { return }
            if case .success(let master) = result, let current = self.sentinelMaster, master != current {
                return self.masterSwitched(to: master)
            }
            self.sentinelTimer.schedule(after: .seconds(1))
        }
    }

    /// AUTH and SELECT go out first, then a PING; once that is answered, the scripts
    /// (SCRIPT LOAD), then the commands callers sent meanwhile, so they run only on a fully
    /// set-up connection. Redis closes a connection that is not authenticated and sends
    /// more than 16 KiB in one argument (our larger scripts are), with a reset that can
    /// lose its NOAUTH answer: the scripts wait until Redis said the connection may ask.
    private func sendHandshake(_ context: UnsafeMutablePointer<redisAsyncContext>) {
        var steps: [(inout RedisArguments) -> Void] = []
        var checks: [Int: (RedisReply) -> String?] = [:]
        if case .sentinel = configuration.endpoint {
            // A node the Sentinels named a moment ago may have been demoted since.
            checks[steps.count] = { reply in
                if case .array(let items) = reply, items.first?.string == "master" { return nil }
                return "the node the Sentinels named is not a master (yet)"
            }
            steps.append { args in args.append("ROLE") }
        }
        if let password = configuration.password {
            let username = configuration.username
            steps.append { args in
                args.append("AUTH")
                if let username { args.append(username) }
                args.append(password)
            }
        }
        if configuration.database != 0 {
            let database = configuration.database
            steps.append { $0.append("SELECT", database) }
        }
        // Redis's maxmemory-policy, read before any caller's command goes out
        // (RedisConnection+Eviction.swift): its answer, even an error, never fails the set-up.
        let evictionStep = configuration.readsEvictionPolicy ? steps.count : -1
        if configuration.readsEvictionPolicy { steps.append { [unowned self] args in self.appendEvictionCheck(&args) } }
        if !scripts.isEmpty { steps.append { args in args.append("PING") } }
        handshakeRepliesLeft = steps.count + scripts.count
        if steps.isEmpty { return }
        holding = true
        let sent = generation
        for (index, step) in steps.enumerated() {
            let check = checks[index]
            handshakeStep(step) { [unowned self] reply in
                var result = reply
                if case .success(let answer) = reply, let problem = check?(answer) {
                    result = .failure(RedisError(.server, problem))
                } else if index == evictionStep, self.generation == sent {
                    // Not authenticated: the set-up fails with Redis's NOAUTH (store unavailable,
                    // naming it), never as an evicting Redis.
                    if case .failure(let error) = reply, error.kind != .server || Self.isAuthenticationRefusal(error) {} else {
                        self.noteEvictionPolicy(Self.evictionPolicy(from: reply))
                        result = .success(.null)
                    }
                }
                self.handshakeStepDone(result)
                if index == steps.count - 1, case .success = result, self.holding, self.generation == sent { self.loadScripts() }
            }
        }
    }

    /// The handshake's second part: the scripts (if any), then what callers sent meanwhile.
    private func loadScripts() {
        guard let context else { return }
        for script in scripts {
            handshakeStep({ args in
                args.append("SCRIPT", "LOAD", script.source)
            }, completion: { [unowned self] result in self.handshakeStepDone(result) })
        }
        holding = false
        let waiting = held
        held.removeAll()
        for (command, entry) in waiting {
            // Sent while connecting, before the policy was read: refused now if it evicts.
            if let evictionRefusal {
                entry.completion(.failure(evictionRefusal))
                continue
            }
            formatted = command
            enqueueFormatted(context, entry)
        }
    }

    /// Sends a step of the handshake ahead of the commands held meanwhile.
    private func handshakeStep(_ build: (inout RedisArguments) -> Void, completion: @escaping Completion) {
        let wasHolding = holding
        holding = false
        sendRegardless(build, completion: completion)
        holding = wasHolding
    }

    private func handshakeStepDone(_ result: Result<RedisReply, RedisError>) {
        switch result {
        case .success:
            handshakeRepliesLeft -= 1
            if handshakeRepliesLeft == 0 { becomeReadyIfConnected() }
        case .failure(let error):
            if error.kind == .server {
                drop(RedisError(.unavailable, "Redis refused the connection set-up: \(error.message)"))
            }
        }
    }

    func connected(status: Int32) {
        guard status == REDIS_OK else {
            // hiredis frees the context itself after a failed connect, as after a disconnect.
            let message = context?.pointee.errstr.map { String(cString: $0) } ?? "connection refused"
            lastError = RedisError(.unavailable, "cannot connect to Redis: \(message)")
            return disconnected()
        }
        becomeReadyIfConnected()
    }

    private func becomeReadyIfConnected() {
        guard let context, handshakeRepliesLeft == 0,
              context.pointee.c.flags & Int32(REDIS_CONNECTED) != 0 else { return }
        connectTimer.cancel()
        backoff = configuration.reconnectBackoff.lowerBound
        if failedAttempts > 0 {
            logger.info("redis \(address): connected again after \(failedAttempts) failed attempt\(failedAttempts == 1 ? "" : "s")")
        } else {
            logger.debug("redis \(address): connected")
        }
        failedAttempts = 0
        lastError = nil
        state = .ready
        if sentinel != nil { sentinelTimer.schedule(after: .seconds(1)) }
        if configuration.readsEvictionPolicy { evictionTimer.schedule(after: configuration.evictionCheckInterval) }
    }

    func disconnected() {
        // The context is being freed by hiredis: forget it, fail what waits, reconnect.
        context?.pointee.data = nil
        context = nil
        drop(lastError ?? RedisError(.unavailable, "the connection to Redis was lost"))
    }

    /// Drops the current context (if any), fails every pending command with `error`
    /// and, unless closed, schedules a reconnect.
    func drop(_ error: RedisError) {
        connectTimer.cancel()
        deadlineTimer.cancel()
        evictionTimer.cancel()
        if sentinel != nil {
            sentinelTimer.cancel()
            // Ask the Sentinels again before the next attempt, unless they just named
            // the new master (a switch seen by watchSentinels).
            if !error.message.hasPrefix("the Sentinels moved") { sentinelMaster = nil }
        }
        generation &+= 1
        // The next connection may reach another server (a failover, a restart): read its clock anew.
        clock = RedisClock()
        if let context {
            self.context = nil
            context.pointee.data = nil
            redisAsyncFree(context)
        }
        let failed = pending.removeAll()
        let heldBack = held.map(\.entry)
        held.removeAll()
        holding = false
        if state != .closed { scheduleReconnect(after: error) }
        for entry in failed { entry.completion(.failure(error)) }
        for entry in heldBack { entry.completion(.failure(error)) }
    }

    private func scheduleReconnect(after error: RedisError) {
        lastError = error
        statistics.recordError()
        guard state != .closed else { return }
        let jittered = backoff * Double.random(in: 0.5...1.0)
        logReconnect(after: error, wasReady: state == .ready, in: jittered)
        state = .waitingToReconnect
        statistics.recordReconnect()
        backoff = min(backoff * 2, configuration.reconnectBackoff.upperBound)
        reconnectTimer.schedule(after: jittered)
    }
}

let redisConnectThunk: @convention(c) (UnsafePointer<redisAsyncContext>?, Int32) -> Void = { context, status in
    guard let data = context?.pointee.data else { return }
    Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue().connected(status: status)
}

let redisDisconnectThunk: @convention(c) (UnsafePointer<redisAsyncContext>?, Int32) -> Void = { context, _ in
    guard let data = context?.pointee.data else { return }
    Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue().disconnected()
}
