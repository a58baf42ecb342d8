/// What the connection tells its logger.
extension RedisConnection {
    /// The node or master this connection serves, as the log names it: `host:port`, a
    /// socket path, or `master NAME at host:port` with Sentinels. Never a key.
    var address: String {
        switch configuration.endpoint {
        case .tcp(let host, let port): "\(host):\(port)"
        case .unix(let path): path
        case .sentinel(_, let master): "master \(master) at \(sentinelMaster?.description ?? "(unknown)")"
        case .cluster: "cluster"
        }
    }

    /// A working connection lost is a warning; so is the first attempt that fails, and
    /// then every tenth, so an outage is seen without a line per backoff step.
    func logReconnect(after error: RedisError, wasReady: Bool, in delay: Duration) {
        failedAttempts += 1
        let milliseconds = Int(delay / .milliseconds(1))
        if wasReady {
            failedAttempts = 1
            logger.warning("redis \(address): connection lost (\(error)); reconnecting in \(milliseconds) ms")
        } else if failedAttempts == 1 || failedAttempts % 10 == 0 {
            logger.warning("redis \(address): attempt \(failedAttempts) failed (\(error)); retrying in \(milliseconds) ms")
        } else {
            logger.debug("redis \(address): attempt \(failedAttempts) failed (\(error)); retrying in \(milliseconds) ms")
        }
    }

    /// The Sentinels named `master` (by `+switch-master`, a periodic check or a lookup at
    /// reconnect): the connection goes to it from now on, and another node than the last
    /// one named is a master switch, a warning.
    func noteMaster(_ master: RedisConfiguration.HostPort) {
        sentinelMaster = master
        guard case .sentinel(_, let name) = configuration.endpoint, master != lastNamedMaster else { return }
        if let previous = lastNamedMaster {
            logger.warning("redis master \(name): the Sentinels switched it from \(previous) to \(master); reconnecting")
        } else {
            logger.debug("redis master \(name): the Sentinels name \(master)")
        }
        lastNamedMaster = master
    }

    /// `NOSCRIPT` (Redis restarted, or `SCRIPT FLUSH`): every call in flight reloads, so
    /// one line a second says how many did.
    func logScriptReload(_ script: RedisScript) {
        guard logger.isEnabled(.info) else { return }
        let now = ContinuousClock.now
        if let last = scriptReloadLogged, now - last < .seconds(1) {
            scriptReloadsUnlogged += 1
            return
        }
        let earlier = scriptReloadsUnlogged == 0 ? "" : " (and \(scriptReloadsUnlogged) more reloads since the last line)"
        scriptReloadLogged = now
        scriptReloadsUnlogged = 0
        logger.info("redis \(address): NOSCRIPT for script \(script.sha1.prefix(12)) (Redis restarted or flushed its scripts): loading it again and retrying the call\(earlier)")
    }
}
