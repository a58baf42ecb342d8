/// Redis's clock as one connection reckons it: a `TIME` reading carried forward by this
/// machine's monotonic clock. A script that takes the time as an argument is spared its
/// own `TIME` call, one of the dearest parts of a small script; its times stay Redis's, not
/// this machine's wall clock, so gates whose clocks disagree still agree on every window.
///
/// The error bound (issue 34, finding 6): the reckoning is never more than `maximumError`
/// (25 ms) off Redis's clock, or there is none and scripts ask `TIME` themselves. Redis
/// read its clock somewhere between the request and the reply, so a reading is placed
/// half-way and is off by at most half its round trip (a busy loop that handles the reply
/// late stretches it); a reading whose round trip is over `maximumRoundTrip` (40 ms) is
/// never used, and another is asked `retryAfterRejected` later. While carried forward, a
/// reading may drift from Redis's clock by `driftRate` (500 ppm, the most NTP slews a
/// clock) and is used for `lifetime` (10 s) at most: 20 + 5 ms. Each reading is read again
/// after `reread` (1 s), and a new one is checked against the held one: when they disagree
/// by more than both their errors, Redis's clock stepped (an operator, NTP) and the new
/// reading replaces the held one at once (or, when its round trip is over the bound, the
/// held one is dropped). Otherwise the one with the smaller error now is kept. A new
/// connection (a restart, a failover) starts a new reckoning; until a reading comes there
/// is none.
struct RedisClock {
    /// The longest round trip of a reading that is used: its error is at most half that.
    static let maximumRoundTrip: Duration = .milliseconds(40)
    /// How long a reading is carried forward at most.
    static let lifetime: Duration = .seconds(10)
    /// How fast Redis's clock may move apart from this machine's monotonic clock, in
    /// parts per million: NTP slews a clock by at most 500 ppm.
    static let driftRate: Int64 = 500
    /// The most the reckoning is off Redis's clock: half the longest round trip used, plus
    /// the drift of a reading at the end of its lifetime.
    static let maximumError: Duration = maximumRoundTrip / 2 + drift(over: lifetime)
    /// How soon a held reading is read again (and checked for a step of Redis's clock).
    static let reread: Duration = .seconds(1)
    /// How soon a reading is asked again after one that was not used (too slow), while no
    /// reading is held.
    static let retryAfterRejected: Duration = .milliseconds(100)

    struct Reading {
        /// Redis's `TIME` in µs since 1970…
        let redisMicroseconds: Int64
        /// …at this moment by the monotonic clock (half-way between the request and its reply).
        let instant: ContinuousClock.Instant
        /// The request's round trip: twice the reading's largest error when taken.
        let roundTrip: Duration

        /// Redis's clock at `now` in µs, carried forward.
        func microseconds(at now: ContinuousClock.Instant) -> Int64 { redisMicroseconds + (now - instant).wholeMicroseconds }

        /// The most this reading is off Redis's clock at `now`.
        func error(at now: ContinuousClock.Instant) -> Duration { roundTrip / 2 + RedisClock.drift(over: now - instant) }
    }

    private(set) var reading: Reading?
    /// A `TIME` request is on its way.
    var readPending = false
    /// When the last one was sent.
    private(set) var lastSent: ContinuousClock.Instant?
    /// How many readings noticed a step of Redis's clock (for tests and logs).
    private(set) var steps = 0

    /// Redis's clock at `now` in ms since 1970 (whole ms, as a script makes of `TIME`), or
    /// nil without a usable reading (none yet, or the held one past its lifetime).
    func milliseconds(at now: ContinuousClock.Instant) -> Int64? {
        guard let reading, now - reading.instant <= Self.lifetime else { return nil }
        return reading.microseconds(at: now) / 1000
    }

    func isDue(at now: ContinuousClock.Instant) -> Bool {
        guard !readPending else { return false }
        guard let reading else { return lastSent.map { now - $0 >= Self.retryAfterRejected } ?? true }
        return now - reading.instant > Self.reread && lastSent.map { now - $0 > Self.reread } ?? true
    }

    mutating func sent(at instant: ContinuousClock.Instant) {
        readPending = true
        lastSent = instant
    }

    /// Takes Redis's `TIME` (µs) from a request sent at `sent` and answered at `received`:
    /// checks the held reading against it, and keeps the better of the two.
    mutating func received(redisMicroseconds: Int64, sent: ContinuousClock.Instant, received: ContinuousClock.Instant) {
        readPending = false
        let candidate = Reading(
            redisMicroseconds: redisMicroseconds, instant: sent + (received - sent) / 2, roundTrip: received - sent)
        let usable = candidate.roundTrip <= Self.maximumRoundTrip
        guard let held = reading, received - held.instant <= Self.lifetime else {
            reading = usable ? candidate : nil
            return
        }
        // Both readings hold Redis's clock at the candidate's instant, each within its error
        // (plus a ms: TIME's µs and the monotonic clock's ns are cut to whole µs).
        let apart = abs(held.microseconds(at: candidate.instant) - candidate.redisMicroseconds)
        let tolerance = (held.error(at: candidate.instant) + candidate.roundTrip / 2 + .milliseconds(1)).wholeMicroseconds
        if apart > tolerance {
            steps += 1
            reading = usable ? candidate : nil
        } else if usable && candidate.error(at: received) <= held.error(at: received) {
            reading = candidate
        }
    }

    /// The most Redis's clock moves apart from the monotonic clock over `duration`.
    static func drift(over duration: Duration) -> Duration { .microseconds(duration.wholeMicroseconds * driftRate / 1_000_000) }
}

extension RedisConnection {
    /// Redis's clock now in ms since 1970, or nil until the connection has read it.
    func redisNowMilliseconds() -> Int64? {
        clock.milliseconds(at: .now)
    }

    /// Sends `TIME` when the reckoning is due for a reading and the connection is ready (a
    /// reading queued behind the handshake's script loads would wait for them). Called
    /// after a command is queued, so a cluster's `ASKING` before that command still applies
    /// to it.
    func readClockIfDue() {
        let sent = ContinuousClock.now
        guard clock.isDue(at: sent), let context, state == .ready else { return }
        clock.sent(at: sent)
        let generationSent = generation
        arguments.reset()
        arguments.append("TIME")
        enqueue(context, Pending(deadline: sent + configuration.commandTimeout, completion: { [unowned self] result in
            // A failure other than Redis's own answer comes from `drop`, which starts a new
            // reckoning itself (and may run in `deinit`, where `self` must not be touched).
            if case .failure(let error) = result, error.kind != .server { return }
            // A reply of a dropped connection may be another server's clock.
            guard self.generation == generationSent else { return }
            guard case .success(.array(let items)) = result, items.count == 2,
                  let seconds = items[0].string.flatMap(Int64.init), let micros = items[1].string.flatMap(Int64.init)
            else {
                self.clock.readPending = false
                return
            }
            let steps = self.clock.steps
            self.clock.received(redisMicroseconds: seconds * 1_000_000 + micros, sent: sent, received: .now)
            if self.clock.steps > steps {
                self.logger.warning("redis \(self.address): Redis's clock stepped; its reckoning starts anew")
            }
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
