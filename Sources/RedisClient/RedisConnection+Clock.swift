/// Redis's clock as this connection reckons it: a `TIME` reading carried forward by this
/// machine's monotonic clock. A script that takes the time as an argument is spared its
/// own `TIME` call, one of the dearest parts of a small script; its times stay Redis's, not
/// this machine's wall clock, so gates whose clocks disagree still agree on every window.
///
/// Redis read its clock somewhere between the request and the reply, so a reading is
/// placed half-way and is off by at most half its round trip; a busy loop that handles the
/// reply late stretches the round trip. So a reading is read again after
/// `clockReadingLifetime`, or after `quickClockReread` when its round trip was over
/// `quickRoundTrip`, and a new reading replaces the old one only when its round trip is
/// no longer (or at most twice the shortest seen, once the old one is past its lifetime).
/// A new connection (a restart, a failover) reads it afresh; until then there is none.
extension RedisConnection {
    /// How long a good reading is carried forward: monotonic clocks drift apart by parts
    /// per million, far below a millisecond in this time.
    static let clockReadingLifetime: Duration = .seconds(10)
    /// A round trip this short makes a reading good (off by a millisecond at most).
    static let quickRoundTrip: Duration = .milliseconds(2)
    /// How soon a reading whose round trip was longer is read again.
    static let quickClockReread: Duration = .seconds(1)

    struct ClockReading {
        /// Redis's `TIME` in µs since 1970…
        let redisMicroseconds: Int64
        /// …at this moment by the monotonic clock (half-way between the request and its reply).
        let instant: ContinuousClock.Instant
        /// The request's round trip: twice the reading's largest error.
        let roundTrip: Duration

        /// When to read again.
        var rereadAfter: Duration { roundTrip <= RedisConnection.quickRoundTrip ? RedisConnection.clockReadingLifetime : RedisConnection.quickClockReread }
    }

    /// Redis's clock now in ms since 1970 (whole ms, as a script makes of `TIME`), or nil
    /// until the connection has read it.
    func redisNowMilliseconds() -> Int64? {
        guard let reading = clockReading else { return nil }
        return (reading.redisMicroseconds + (ContinuousClock.now - reading.instant).wholeMicroseconds) / 1000
    }

    /// Starts a reading when none is held or the held one is due, at most one a second
    /// however many keep losing to the one held. Called after a command is queued, so a
    /// cluster's `ASKING` before that command still applies to it.
    func readClockIfDue() {
        guard let reading = clockReading else { return readClock() }
        let now = ContinuousClock.now
        if now - reading.instant > reading.rereadAfter, clockReadSent.map({ now - $0 > Self.quickClockReread }) ?? true {
            readClock()
        }
    }

    /// Sends `TIME`, unless a reading is on its way or the connection is not ready (a
    /// reading queued behind the handshake's script loads would wait for them).
    private func readClock() {
        guard !clockReadPending, let context, state == .ready else { return }
        clockReadPending = true
        let sent = ContinuousClock.now
        clockReadSent = sent
        let generationSent = generation
        arguments.reset()
        arguments.append("TIME")
        enqueue(context, Pending(deadline: sent + configuration.commandTimeout, completion: { [unowned self] result in
            // A failure other than Redis's own answer comes from `drop`, which resets the
            // reading itself (and may run in `deinit`, where `self` must not be touched).
            if case .failure(let error) = result, error.kind != .server { return }
            self.clockReadPending = false
            // A reply of a dropped connection may be another server's clock.
            guard self.generation == generationSent, case .success(.array(let items)) = result, items.count == 2,
                  let seconds = items[0].string.flatMap(Int64.init), let micros = items[1].string.flatMap(Int64.init)
            else { return }
            let received = ContinuousClock.now
            let reading = ClockReading(
                redisMicroseconds: seconds * 1_000_000 + micros, instant: sent + (received - sent) / 2,
                roundTrip: received - sent)
            self.shortestClockRoundTrip = min(self.shortestClockRoundTrip ?? reading.roundTrip, reading.roundTrip)
            if let current = self.clockReading, reading.roundTrip > current.roundTrip,
               received - current.instant <= Self.clockReadingLifetime
                || reading.roundTrip > (self.shortestClockRoundTrip ?? reading.roundTrip) * 2 {
                return  // the reading held is the better one
            }
            self.clockReading = reading
        }, retry: nil))
    }
}

extension Duration {
    /// Whole microseconds, rounded toward zero.
    var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
