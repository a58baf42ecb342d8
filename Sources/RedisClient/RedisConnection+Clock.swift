/// Redis's clock as this connection reckons it: a `TIME` reading carried forward by this
/// machine's monotonic clock, read again every `clockReadingLifetime`. A script that
/// takes the time as an argument is spared its own `TIME` call, one of the dearest parts
/// of a small script; its times stay Redis's (give or take half a round trip), not this
/// machine's wall clock, so gates whose clocks disagree still agree on every window.
/// A new connection (a restart, a failover) reads it afresh; until then there is none.
extension RedisConnection {
    /// How long a reading is carried forward: monotonic clocks drift apart by parts per
    /// million, far below a millisecond in this time.
    static let clockReadingLifetime: Duration = .seconds(10)

    struct ClockReading {
        /// Redis's `TIME` in ms since 1970…
        let redisMilliseconds: Int64
        /// …at this moment by the monotonic clock (half-way between the request and its reply).
        let instant: ContinuousClock.Instant
    }

    /// Redis's clock now in ms since 1970, or nil until the connection has read it (it
    /// starts a reading then, and when the last one is old).
    func redisNowMilliseconds() -> Int64? {
        let now = ContinuousClock.now
        guard let reading = clockReading else {
            readClock()
            return nil
        }
        let elapsed = now - reading.instant
        if elapsed > Self.clockReadingLifetime { readClock() }
        return reading.redisMilliseconds + elapsed.wholeMillisecondsTruncated
    }

    /// Sends `TIME`, unless a reading is on its way or there is no connection.
    private func readClock() {
        guard !clockReadPending, let context, state == .ready || state == .connecting else { return }
        clockReadPending = true
        let sent = ContinuousClock.now
        let generationSent = generation
        arguments.reset()
        arguments.append("TIME")
        enqueue(context, Pending(deadline: sent + configuration.commandTimeout, completion: { [weak self] result in
            guard let self else { return }
            self.clockReadPending = false
            // A reply of a dropped connection may be another server's clock.
            guard self.generation == generationSent, case .success(.array(let items)) = result, items.count == 2,
                  let seconds = items[0].string.flatMap(Int64.init), let micros = items[1].string.flatMap(Int64.init)
            else { return }
            let received = ContinuousClock.now
            self.clockReading = ClockReading(
                redisMilliseconds: seconds * 1000 + micros / 1000, instant: sent + (received - sent) / 2)
        }, retry: nil))
    }
}

extension Duration {
    /// Whole milliseconds, rounded toward zero.
    var wholeMillisecondsTruncated: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
