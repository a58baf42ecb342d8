import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateTestSupport
import Synchronization
import Testing

/// The library's logger: a real Redis killed and restarted, and its scripts flushed, reach
/// the caller's logger as lines at the documented levels, and no line holds a number.
@Suite("Gate: logging to the caller's logger")
struct GateLoggerTests {
    @Test func reconnectAndScriptReloadAreLoggedWithoutANumber() async throws {
        let capture = LogCapture()
        try await withRedis { redis in
            let configuration = try GateConfiguration(
                redis: RedisConfiguration(url: redis.url, connectTimeout: .milliseconds(500), commandTimeout: .milliseconds(500)),
                defaultRegion: "CN")
            let gate = Gate(configuration: configuration, logger: capture.logger(.debug))
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(capture.lines(at: .warning).isEmpty, "\(capture.all)")

            await offThePool { redis.kill() }
            let down = await gateError { () async throws(GateError) in try await gate.reserve(phone: "+8613900139000") }
            #expect(down?.kind == .storeUnavailable)
            try await offThePool { try redis.restart() }
            let recovered = try await poll(every: .milliseconds(50), upTo: .seconds(3)) { try? await gate.peek(phone: number) }
            #expect(recovered != nil, "gate did not serve within 3 s of Redis restarting: \(capture.all)")
            let lost = capture.lines(at: .warning).filter { $0.contains("connection lost") }
            #expect(lost.count == 1, "\(capture.all)")
            #expect(lost.first?.contains("127.0.0.1:\(redis.port)") == true, "\(capture.all)")
            #expect(capture.lines(at: .info).contains { $0.contains("connected again after") }, "\(capture.all)")

            // The restart loaded the scripts at connect; a flush makes the next call reload.
            #expect(try redis.client().command("SCRIPT", "FLUSH") == .simpleString("OK"))
            // The default policy's send runs no script (plain commands); a peek does.
            _ = try await gate.peek(phone: "+8613700137000")
            let reloads = capture.lines(at: .info).filter { $0.contains("NOSCRIPT") }
            #expect(reloads.count == 1, "\(capture.all)")

            for line in capture.all {
                for digits in ["13800138000", "13900139000", "13700137000"] {
                    #expect(!line.contains(digits), "a log line holds a number: \(line)")
                }
            }
        }
    }

    @Test func aQuieterLoggerHearsOnlyItsLevelsAndBuildsNoOtherText() async throws {
        let capture = LogCapture()
        try await withRedis { redis in
            let configuration = try GateConfiguration(redis: RedisConfiguration.patient(redis.url), defaultRegion: "CN")
            let gate = Gate(configuration: configuration, logger: capture.logger(.warning))
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try redis.client().command("SCRIPT", "FLUSH") == .simpleString("OK"))
            _ = try await gate.peek(phone: "+8613900139000")  // reloaded (a peek runs a script), logged at info only
            #expect(capture.all.isEmpty, "\(capture.all)")

            let built = Atomic(0)
            let logger = capture.logger(.warning)
            logger.info({ built.add(1, ordering: .relaxed); return "not wanted" }())
            logger.warning({ built.add(1, ordering: .relaxed); return "wanted" }())
            #expect(built.load(ordering: .relaxed) == 1)
            #expect(capture.all == ["warning wanted"])
            GateLogger.off.error({ built.add(1, ordering: .relaxed); return "never" }())
            #expect(built.load(ordering: .relaxed) == 1)
        }
    }
}

/// A logger that keeps every line it is given, as `level text`.
final class LogCapture: Sendable {
    private let captured = Mutex<[String]>([])

    func logger(_ minimum: GateLogger.Level) -> GateLogger {
        GateLogger(minimumLevel: minimum) { [self] level, text in
            self.captured.withLock { $0.append("\(level) \(text)") }
        }
    }

    var all: [String] { captured.withLock { $0 } }

    func lines(at level: GateLogger.Level) -> [String] {
        all.filter { $0.hasPrefix("\(level) ") }
    }
}
