import CHiredis

// MARK: - Connecting, handshake, dropping and reconnecting

extension RedisConnection {
    func connect() {
        guard state != .closed else { return }
        state = .connecting
        let created: UnsafeMutablePointer<redisAsyncContext>? = switch configuration.endpoint {
        case .tcp(let host, let port): redisAsyncConnect(host, Int32(port))
        case .unix(let path): redisAsyncConnectUnix(path)
        }
        guard let created else {
            scheduleReconnect(after: RedisError(.unavailable, "could not create a Redis connection (out of memory)"))
            return
        }
        if created.pointee.err != 0 {
            let message = created.pointee.errstr.map { String(cString: $0) } ?? "unknown error"
            redisAsyncFree(created)
            scheduleReconnect(after: RedisError(.unavailable, "cannot connect to Redis: \(message)"))
            return
        }
        generation &+= 1
        context = created
        created.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        redisLibeventAttach(created, loop.base)
        redisAsyncSetConnectCallback(created, redisConnectThunk)
        redisAsyncSetDisconnectCallback(created, redisDisconnectThunk)
        connectTimer.schedule(after: configuration.connectTimeout)
        sendHandshake(created)
    }

    /// AUTH, SELECT and SCRIPT LOAD go out first; commands sent meanwhile pipeline
    /// behind them, so they run only on a fully set-up connection.
    private func sendHandshake(_ context: UnsafeMutablePointer<redisAsyncContext>) {
        var steps: [(inout RedisArguments) -> Void] = []
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
            steps.append { args in
                args.append("SELECT")
                args.append(database)
            }
        }
        for script in scripts {
            steps.append { args in
                args.append("SCRIPT")
                args.append("LOAD")
                args.append(script.source)
            }
        }
        handshakeRepliesLeft = steps.count
        if steps.isEmpty { return }
        for step in steps {
            send(step) { [unowned self] result in self.handshakeStepDone(result) }
        }
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
            // hiredis frees the context itself after a failed connect.
            let message = context?.pointee.errstr.map { String(cString: $0) } ?? "connection refused"
            context?.pointee.data = nil
            context = nil
            drop(RedisError(.unavailable, "cannot connect to Redis: \(message)"))
            return
        }
        becomeReadyIfConnected()
    }

    private func becomeReadyIfConnected() {
        guard let context, handshakeRepliesLeft == 0,
              context.pointee.c.flags & Int32(REDIS_CONNECTED) != 0 else { return }
        connectTimer.cancel()
        backoff = configuration.reconnectBackoff.lowerBound
        lastError = nil
        state = .ready
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
        generation &+= 1
        if let context {
            self.context = nil
            context.pointee.data = nil
            redisAsyncFree(context)
        }
        let failed = pending.removeAll()
        if state != .closed { scheduleReconnect(after: error) }
        for entry in failed { entry.completion(.failure(error)) }
    }

    private func scheduleReconnect(after error: RedisError) {
        lastError = error
        statistics.recordError()
        guard state != .closed else { return }
        state = .waitingToReconnect
        statistics.recordReconnect()
        let jittered = backoff * Double.random(in: 0.5...1.0)
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
