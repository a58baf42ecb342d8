import Foundation
import ResendGate
import ResendGateServer
import ResendGateTestSupport
import Synchronization
import Testing

/// Redis faults through HTTP, one test per fault: `kill -9` then a restart, a stall
/// (SIGSTOP for 3 s), slow replies (`DEBUG SLEEP`) and a clean restart with a new run id.
///
/// For each one the gate must answer 503 `store_unavailable` within the command timeout,
/// never answer 200 while Redis could not record it (every 200 has its cooldown in Redis
/// afterwards), serve again within 1 s of Redis being back, and show the fault on
/// `/readyz` and `/metrics`. Cooldowns recorded before the fault survive it (AOF).
/// Measured latencies are printed (`fault ...` lines) for the record.
@Suite("Redis faults through HTTP", .serialized, .ownThread)
struct RedisFaultTests {
    static let timeout = Duration.milliseconds(500)
    /// Scheduling slack on a loaded 2-core CI machine.
    static let slack = Duration.milliseconds(250)
    /// "Serves again within 1 s of Redis being back."
    static let recoveryBound = Duration.seconds(1)

    @Test func kill9ThenRestartWithAppendfsyncAlways() throws {
        try runFault(
            "kill -9 + restart", redis: RedisServer.Options(appendOnly: true, appendFsync: .always),
            inject: { $0.redis.kill() },
            heal: { gate, injected in
                // Down for 2 s, so that the reconnect backoff has grown to its 500 ms cap.
                Self.sleep(until: injected + .seconds(2))
                try gate.redis.restart()
            })
    }

    @Test func stallOfThreeSecondsWithSIGSTOP() throws {
        try runFault(
            "SIGSTOP 3 s", redis: RedisServer.Options(appendOnly: true),
            inject: { $0.redis.pause() },
            heal: { gate, injected in
                Self.sleep(until: injected + .seconds(3))
                gate.redis.resume()
            })
    }

    @Test func slowRepliesWithDebugSleep() throws {
        let replied = DispatchSemaphore(value: 0)
        try runFault(
            "DEBUG SLEEP 3", redis: RedisServer.Options(appendOnly: true),
            inject: { gate in
                let client = try gate.redis.client(timeout: .seconds(10))
                let thread = Thread {
                    _ = try? client.command("DEBUG", "SLEEP", "3")
                    replied.signal()
                }
                thread.start()
                // DEBUG SLEEP is running once a PING from another client stops answering.
                let probe = try gate.redis.client(timeout: .milliseconds(100))
                for _ in 0..<100 {
                    if (try? probe.command("PING")) == nil { return }
                    usleep(10_000)
                }
            },
            heal: { _, _ in
                // 10 s of running time in slices (a freeze costs one): frozen past a single
                // 10 s wait, the waiter woke timed out before the replying thread ran.
                var answered = false
                for _ in 0..<1_000 where !answered { answered = replied.wait(timeout: .now() + .milliseconds(10)) == .success }
                #expect(answered, "DEBUG SLEEP never answered")
            })
    }

    @Test func cleanRestartWithANewRunID() throws {
        var runIDs: [String] = []
        try runFault(
            "restart (new run id)", redis: RedisServer.Options(appendOnly: true), faultIsObservable: false,
            inject: { gate in runIDs.append(try Self.runID(gate.redis)) },
            heal: { gate, _ in
                try gate.redis.restart()
                runIDs.append(try Self.runID(gate.redis))
            })
        #expect(runIDs.count == 2 && runIDs[0] != runIDs[1], "run ids \(runIDs)")
    }

    /// `--on-store-failure open`: while Redis is down a send is allowed, says it was not
    /// recorded, and indeed starts no cooldown.
    @Test func openModeAllowsUnrecordedSendsAndSaysSo() throws {
        let gate = try RunningGate(redisTimeout: Self.timeout, onStoreFailure: .open)
        defer { gate.stop() }
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        let phone = "+8613800138055"
        gate.redis.kill()
        let response = try gate.client().send(phone: phone)
        #expect(response.status == 200, "\(response)")
        #expect(response.header("X-Resendgate-Store") == "unavailable")
        let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        #expect(body?["allowed"] as? Bool == true)
        #expect(body?["store"] as? String == "unavailable")
        #expect(body?["phone"] as? String == phone)
        #expect(body?["countdown_token"] == nil)
        let metrics = try PrometheusSamples(gate.client().get("/metrics").text)
        #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="store_unavailable""#) == 1)
        #expect(metrics.value("resendgate_decisions_total", #"outcome="allowed",reason="""#) == 0)
        #expect(try gate.client().get("/readyz").status == 503)
        try gate.redis.restart()
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        // Nothing was recorded: the same number is allowed again, this time for real.
        let recorded = try gate.client().send(phone: phone)
        #expect(recorded.status == 200)
        #expect(recorded.header("X-Resendgate-Store") == nil)
        #expect(try gate.client().send(phone: phone).status == 429)
    }

    // MARK: - The common scenario

    /// Runs one fault: record a cooldown, start a background prober, `inject` the fault,
    /// check 503s, `/readyz` and `/metrics` during it (when it lasts long enough to see),
    /// `heal` it, then time the recovery and check every answer the prober got.
    private func runFault(
        _ name: String, redis options: RedisServer.Options, faultIsObservable: Bool = true,
        inject: (RunningGate) throws -> Void, heal: (RunningGate, ContinuousClock.Instant) throws -> Void
    ) throws {
        let gate = try RunningGate(redisTimeout: Self.timeout, redisOptions: options)
        defer { gate.stop() }
        // The gate runs in this process: its answers are timed in the time this process ran
        // (a process frozen meanwhile, as CI's were for up to 15 s, times nothing out).
        let watch = StallWatch.shared
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        let client = gate.client()
        let before = "+8613800138000"
        #expect(try client.send(phone: before).status == 200)
        let metrics0 = try PrometheusSamples(client.get("/metrics").text)
        #expect(metrics0.value("resendgate_redis_up", "") == 2)

        let prober = Prober(port: gate.port)
        prober.start()
        defer { prober.stop() }
        usleep(100_000)

        let injected = ContinuousClock.now
        try inject(gate)
        let faultStarted = ContinuousClock.now
        var worst503 = Duration.zero
        if faultIsObservable {
            for index in 0..<3 {
                let started = ContinuousClock.now
                let response = try client.send(phone: "+86138001381\(String(format: "%02d", index))")
                let elapsed = watch.ran(since: started)
                worst503 = max(worst503, elapsed)
                #expect(response.status == 503, "\(name): \(response)")
                #expect(response.errorCode == "store_unavailable", "\(name): \(response)")
                #expect(elapsed <= Self.timeout + Self.slack, "\(name): 503 after \(elapsed)")
            }
            let ready = try gate.poll("/readyz", until: 503, timeout: .seconds(2))
            #expect(ready.status == 503, "\(name): /readyz \(ready)")
            #expect(ready.errorCode == "store_unavailable")
            let during = try PrometheusSamples(client.get("/metrics").text)
            #expect((during.value("resendgate_redis_up", "") ?? 2) < 2, "\(name): redis_up stayed 2")
            #expect((during.value("resendgate_redis_errors_total", "") ?? 0) > (metrics0.value("resendgate_redis_errors_total", "") ?? 0))
            #expect((during.value("resendgate_redis_reconnects_total", "") ?? 0) > (metrics0.value("resendgate_redis_reconnects_total", "") ?? 0))
        }
        let faultEnded = ContinuousClock.now
        try heal(gate, injected)
        let back = ContinuousClock.now

        // Recovery: a fresh number is allowed, and /readyz (every worker connected, PING) is 200.
        var firstAllowed: Duration?
        var ready: Duration?
        var attempt = 0
        let recovering = PatientDeadline(.seconds(5))
        while (firstAllowed == nil || ready == nil) && recovering.hasTimeLeft {
            if firstAllowed == nil {
                attempt += 1
                let response = try client.send(phone: "+86138002\(String(format: "%05d", attempt))")
                if response.status == 200 { firstAllowed = watch.ran(since: back) }
                else { #expect(response.status == 503, "\(name): \(response)") }
            }
            if ready == nil, try client.get("/readyz").status == 200 { ready = watch.ran(since: back) }
            usleep(10_000)
        }
        let sendRecovery = try #require(firstAllowed, "\(name): no send allowed within 5 s of Redis back")
        let readyRecovery = try #require(ready, "\(name): /readyz not 200 within 5 s of Redis back")
        #expect(sendRecovery <= Self.recoveryBound + Self.slack, "\(name): first 200 after \(sendRecovery)")
        #expect(readyRecovery <= Self.recoveryBound + Self.slack, "\(name): /readyz 200 after \(readyRecovery)")
        usleep(200_000)
        let records = prober.stop()

        // The prober: only 200 or 503; 503s within the timeout; no 200 received while
        // Redis could not answer; every 200 has its cooldown in Redis.
        let redisClient = try gate.redis.client()
        var probe503 = Duration.zero
        var allowedDuringFault = 0
        var unrecorded: [String] = []
        var refusedButRecorded = 0
        for record in records {
            #expect(record.status == 200 || record.status == 503, "\(name): prober got \(record)")
            if record.status == 503 {
                probe503 = max(probe503, record.received - record.sent - watch.stalled(from: record.sent, to: record.received))
                // Known and safe: a script already written to a stalled Redis runs when it
                // resumes, so a send answered 503 may still have started its cooldown.
                if (try redisClient.command("EXISTS", gateKey(.cooldown, record.phone)).integer ?? 0) == 1 {
                    refusedButRecorded += 1
                }
            }
            if record.status == 200 {
                // Received 50 ms of running time into the fault: a prober frozen with the
                // gate stamps an answer given before the fault late.
                if faultIsObservable, record.received > faultStarted + .milliseconds(50) + watch.stalled(from: faultStarted, to: record.received),
                   record.received < faultEnded {
                    allowedDuringFault += 1
                }
                let ttl = try redisClient.command("PTTL", gateKey(.cooldown, record.phone)).integer ?? -2
                if ttl <= 0 { unrecorded.append(record.phone) }
            }
        }
        #expect(probe503 <= Self.timeout + Self.slack, "\(name): a prober 503 took \(probe503)")
        #expect(allowedDuringFault == 0, "\(name): \(allowedDuringFault) sends allowed while Redis was down")
        #expect(unrecorded.isEmpty, "\(name): allowed but not in Redis: \(unrecorded)")
        #expect(records.contains { $0.status == 200 }, "\(name): the prober never got a 200")

        // The cooldown recorded before the fault is still running.
        let again = try client.send(phone: before)
        #expect(again.status == 429, "\(name): the cooldown from before the fault is gone: \(again)")
        let after = try PrometheusSamples(client.get("/metrics").text)
        #expect(after.value("resendgate_redis_up", "") == 2)
        #expect((after.value("resendgate_redis_reconnects_total", "") ?? 0) > (metrics0.value("resendgate_redis_reconnects_total", "") ?? 0))

        let counts = Dictionary(grouping: records, by: \.status).mapValues(\.count)
        print("fault \(name): worst 503 \(Self.ms(worst503)) (prober \(Self.ms(probe503)), timeout \(Self.ms(Self.timeout))); "
            + "first 200 \(Self.ms(sendRecovery)) and /readyz 200 \(Self.ms(readyRecovery)) after Redis was back; "
            + "prober answers \(counts.sorted { $0.key < $1.key }), \(refusedButRecorded) of its 503s started a cooldown anyway")
    }

    // MARK: - Helpers

    static func runID(_ redis: RedisServer) throws -> String {
        let info = try redis.client().command("INFO", "server").string ?? ""
        return info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("run_id:") }.map { String($0.dropFirst(7)) } ?? ""
    }

    static func sleep(until instant: ContinuousClock.Instant) {
        while ContinuousClock.now < instant { usleep(5_000) }
    }

    static func ms(_ duration: Duration) -> String {
        String(format: "%.0f ms", Double(duration / .microseconds(1)) / 1000)
    }
}

/// Sends `POST /v1/sends` for a new number after another, from a thread of its own, and
/// keeps every answer with its send and receive times.
private final class Prober: @unchecked Sendable {
    struct Record: CustomStringConvertible {
        let phone: String
        let status: Int
        let sent: ContinuousClock.Instant
        let received: ContinuousClock.Instant
        var description: String { "\(phone) \(status) in \(received - sent)" }
    }

    private let port: Int
    private let state = Mutex<(records: [Record], running: Bool)>(([], false))
    private let done = DispatchSemaphore(value: 0)
    private var thread: Thread?
    private static let counter = Atomic<Int>(0)

    init(port: Int) { self.port = port }

    func start() {
        state.withLock { $0.running = true }
        let thread = Thread { [self] in
            let client = HTTPTestClient(port: port, timeout: .seconds(5))
            while state.withLock({ $0.running }) {
                let number = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
                let phone = "+86139" + String(format: "%08d", number)
                let sent = ContinuousClock.now
                let status = (try? client.send(phone: phone).status) ?? -1
                let record = Record(phone: phone, status: status, sent: sent, received: .now)
                state.withLock { $0.records.append(record) }
                usleep(20_000)
            }
            done.signal()
        }
        self.thread = thread
        thread.start()
    }

    /// Stops the thread (idempotent) and returns every answer.
    @discardableResult
    func stop() -> [Record] {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.running = false }
            return state.running
        }
        if wasRunning { done.wait() }
        return state.withLock { $0.records }
    }
}
