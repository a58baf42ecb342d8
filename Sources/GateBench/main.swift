import Foundation
import Countdown
import RedisClient
import ResendGate

/// `GateBench`: decisions per second through the library from one process.
///
/// `GateBench --redis URL [--seconds 5] [--concurrency 64] [--repeat 0.25]` runs reserves for
/// random valid numbers (+86138 and 8 random digits) from `concurrency` tasks for `seconds`
/// after a one-second warm-up. About `repeat` of them reuse a number already sent to, so
/// both the allowed and the denied path of the script run. Prints one line of key=value
/// pairs for deploy/dev/bench to read (with the median and 99th percentile latency of the
/// counted calls); exit 1 on any store error.
///
/// `--redis-cluster host:port,...` goes to a Redis Cluster through those seed nodes
/// instead (`--redis` then gives only the password), and `--wait-replicas N` makes every
/// allowed reservation wait for N replicas (`WAIT`), as `resendgate serve` does with it.

struct Options {
    var redis = RedisConfiguration.defaultURL
    var seconds = 5.0
    var warmup = 1.0
    var concurrency = 64
    var repeatShare = 0.25
    var cluster: String?
    var waitReplicas = 0

    init(_ arguments: [String]) {
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--redis": redis = value()
            case "--seconds": seconds = Double(value()) ?? { fail("--seconds needs a number") }()
            case "--warmup": warmup = Double(value()) ?? { fail("--warmup needs a number") }()
            case "--concurrency": concurrency = Int(value()) ?? { fail("--concurrency needs a whole number") }()
            case "--repeat": repeatShare = Double(value()) ?? { fail("--repeat needs a number") }()
            case "--redis-cluster": cluster = value()
            case "--wait-replicas": waitReplicas = Int(value()) ?? { fail("--wait-replicas needs a whole number") }()
            case "-h", "--help":
                print("usage: GateBench [--redis URL | --redis-cluster HOST:PORT,...] [--wait-replicas N]"
                    + " [--seconds 5] [--warmup 1] [--concurrency 64] [--repeat 0.25]")
                exit(0)
            case let other: fail("unknown argument \(other)")
            }
            index += 1
        }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("GateBench: \(message)\n".utf8))
    exit(2)
}

/// Counts of one caller; summed at the end, so the hot loop shares nothing.
struct Tally: Sendable {
    var allowed = 0
    var denied = 0
    var errors = 0
    var firstError: String?
    /// Each counted call's time from request to reply, in microseconds.
    var latencies: [UInt32] = []

    static func + (lhs: Tally, rhs: Tally) -> Tally {
        Tally(allowed: lhs.allowed + rhs.allowed, denied: lhs.denied + rhs.denied,
              errors: lhs.errors + rhs.errors, firstError: lhs.firstError ?? rhs.firstError,
              latencies: lhs.latencies + rhs.latencies)
    }
}

/// `value` as eight decimal digits with leading zeros, without Foundation's formatter
/// (which would cost the callers more than a cached decision does).
func eightDigits(_ value: UInt64) -> String {
    var digits = [UInt8](repeating: UInt8(ascii: "0"), count: 8)
    var rest = value
    for index in stride(from: 7, through: 0, by: -1) {
        digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
        rest /= 10
    }
    return String(decoding: digits, as: UTF8.self)
}

/// One caller: reserve after reserve until `end`; counts only replies that come after `countFrom`.
func caller(_ gate: Gate, seed: UInt64, repeatShare: Double, countFrom: ContinuousClock.Instant, end: ContinuousClock.Instant) async -> Tally {
    var random = SplitMix64(seed: seed)
    var sent: [String] = []
    sent.reserveCapacity(4096)
    var tally = Tally()
    tally.latencies.reserveCapacity(16_384)
    while true {
        let phone: String
        if !sent.isEmpty, Double(random.next() % 1_000_000) / 1_000_000 < repeatShare {
            phone = sent[Int(random.next() % UInt64(sent.count))]
        } else {
            phone = "+86138" + eightDigits(random.next() % 100_000_000)
            if sent.count < 4096 { sent.append(phone) } else { sent[Int(random.next() % 4096)] = phone }
        }
        let outcome: Result<Decision, GateError>
        let asked = ContinuousClock.now
        do { outcome = .success(try await gate.reserve(phone: phone)) } catch { outcome = .failure(error) }
        let now = ContinuousClock.now
        if now >= end { return tally }
        guard now >= countFrom else { continue }
        let took = (now - asked).components
        tally.latencies.append(UInt32(clamping: took.seconds * 1_000_000 + took.attoseconds / 1_000_000_000_000))
        switch outcome {
        case .success(let decision) where decision.allowed: tally.allowed += 1
        case .success: tally.denied += 1
        case .failure(let error):
            tally.errors += 1
            if tally.firstError == nil { tally.firstError = error.message }
        }
    }
}

/// `count` callers at once, their tallies summed.
func callers(
    _ gate: Gate, count: Int, seed: UInt64, repeatShare: Double, countFrom: ContinuousClock.Instant,
    end: ContinuousClock.Instant
) async -> Tally {
    await withTaskGroup(of: Tally.self) { group in
        for index in 0..<count {
            let callerSeed = seed &+ UInt64(index) &* 0x1_0000_0001
            group.addTask { await caller(gate, seed: callerSeed, repeatShare: repeatShare, countFrom: countFrom, end: end) }
        }
        return await group.reduce(Tally()) { $0 + $1 }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let configuration: GateConfiguration
do {
    var redis = try RedisConfiguration(url: options.redis, connectTimeout: .seconds(2), commandTimeout: .seconds(2))
    if let cluster = options.cluster {
        redis = try .cluster(seeds: RedisConfiguration.HostPort.parseList(cluster, field: "redis-cluster"), base: redis)
    }
    configuration = try GateConfiguration(redis: redis, defaultRegion: "CN", waitReplicas: options.waitReplicas)
} catch {
    fail("\(error)")
}
let gate = Gate(configuration: configuration)
do {
    _ = try await gate.peek(phone: "+8613800138000")  // connected and scripts loaded
} catch {
    FileHandle.standardError.write(Data("GateBench: Redis not usable: \(error.message)\n".utf8))
    exit(1)
}

let start = ContinuousClock.now
let countFrom = start + .milliseconds(Int(options.warmup * 1000))
let end = countFrom + .milliseconds(Int(options.seconds * 1000))
let base = UInt64(truncatingIfNeeded: Int(Date().timeIntervalSince1970 * 1_000_000))
let total = await callers(
    gate, count: options.concurrency, seed: base, repeatShare: options.repeatShare, countFrom: countFrom, end: end)
let decisions = total.allowed + total.denied
let perSecond = Double(decisions) / options.seconds
let sorted = total.latencies.sorted()
/// The q-quantile of the counted calls' latencies, in milliseconds.
func quantile(_ q: Double) -> Double {
    sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000
}
print(String(
    format: "decisions=%d allowed=%d denied=%d errors=%d seconds=%.1f concurrency=%d decisions_per_second=%.0f"
        + " p50_ms=%.3f p99_ms=%.3f",
    decisions, total.allowed, total.denied, total.errors, options.seconds, options.concurrency, perSecond,
    quantile(0.50), quantile(0.99)))
if let firstError = total.firstError {
    FileHandle.standardError.write(Data("GateBench: \(total.errors) errors, first: \(firstError)\n".utf8))
    exit(1)
}
exit(0)
