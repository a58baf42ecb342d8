/// Redis's clock as one connection reckons it: a `TIME` reading carried forward by this
/// machine's monotonic clock. A script that takes the time as an argument is spared its
/// own `TIME` call, one of the dearest parts of a small script; its times stay Redis's, not
/// this machine's wall clock, so gates whose clocks disagree still agree on every window.
///
/// Redis read its clock somewhere between the request and the reply, so a reading is
/// placed half-way and is off by at most half its round trip; a busy loop that handles the
/// reply late stretches the round trip. So a reading is read again after `lifetime`, or
/// after `quickReread` when its round trip was over `quickRoundTrip` (and never more
/// often), and a new reading replaces the held one only when its round trip is no longer
/// (or, once the held one is past its lifetime, at most twice the shortest seen). A new
/// connection (a restart, a failover) starts a new reckoning; until a reading comes there
/// is none.
struct RedisClock {
    /// How long a good reading is carried forward: monotonic clocks drift apart by parts
    /// per million, far below a millisecond in this time.
    static let lifetime: Duration = .seconds(10)
    /// A round trip this short makes a reading good (off by a millisecond at most).
    static let quickRoundTrip: Duration = .milliseconds(2)
    /// How soon a reading whose round trip was longer is read again.
    static let quickReread: Duration = .seconds(1)

    struct Reading {
        /// Redis's `TIME` in µs since 1970…
        let redisMicroseconds: Int64
        /// …at this moment by the monotonic clock (half-way between the request and its reply).
        let instant: ContinuousClock.Instant
        /// The request's round trip: twice the reading's largest error.
        let roundTrip: Duration
    }

    private(set) var reading: Reading?
    /// A `TIME` request is on its way.
    var readPending = false
    /// When the last one was sent.
    private(set) var lastSent: ContinuousClock.Instant?
    /// The shortest round trip of a reading so far.
    private var shortestRoundTrip: Duration?

    /// Redis's clock at `now` in ms since 1970 (whole ms, as a script makes of `TIME`), or
    /// nil without a reading.
    func milliseconds(at now: ContinuousClock.Instant) -> Int64? {
        guard let reading else { return nil }
        return (reading.redisMicroseconds + (now - reading.instant).wholeMicroseconds) / 1000
    }

    func isDue(at now: ContinuousClock.Instant) -> Bool {
        guard !readPending else { return false }
        guard let reading else { return true }
        let rereadAfter = reading.roundTrip <= Self.quickRoundTrip ? Self.lifetime : Self.quickReread
        return now - reading.instant > rereadAfter && lastSent.map { now - $0 > Self.quickReread } ?? true
    }

    mutating func sent(at instant: ContinuousClock.Instant) {
        readPending = true
        lastSent = instant
    }

    /// Takes Redis's `TIME` (µs) from a request sent at `sent` and answered at `received`,
    /// unless the reading held is the better one.
    mutating func received(redisMicroseconds: Int64, sent: ContinuousClock.Instant, received: ContinuousClock.Instant) {
        readPending = false
        let candidate = Reading(
            redisMicroseconds: redisMicroseconds, instant: sent + (received - sent) / 2, roundTrip: received - sent)
        let shortest = min(shortestRoundTrip ?? candidate.roundTrip, candidate.roundTrip)
        shortestRoundTrip = shortest
        if let held = reading, candidate.roundTrip > held.roundTrip {
            let heldIsFresh = received - held.instant <= Self.lifetime
            if heldIsFresh || candidate.roundTrip > shortest * 2 { return }
        }
        reading = candidate
    }
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
            self.clock.received(redisMicroseconds: seconds * 1_000_000 + micros, sent: sent, received: .now)
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
