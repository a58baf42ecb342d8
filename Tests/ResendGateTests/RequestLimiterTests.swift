import GateRuntime
import RedisClient
@testable import ResendGate
import Testing

/// `--ip-max-requests N/D` (issue 23, finding 2): what one client address may ask, allowed
/// or not, on an injected clock.
@Suite("Request limiter")
struct RequestLimiterTests {
    final class FakeClock: @unchecked Sendable {
        var milliseconds: Int64 = 1_000_000
    }

    @Test func aBurstOfTheCountThenOneAnInterval() {
        let clock = FakeClock()
        let limiter = RequestLimiter(rate: RequestRate(count: 6, period: .seconds(60))) { clock.milliseconds }
        for _ in 0..<6 { #expect(limiter.admit("203.0.113.7") == nil) }
        // The 7th waits one interval (60 s / 6), and asking again does not push it back.
        for _ in 0..<100 { #expect(limiter.admit("203.0.113.7") == 10_000) }
        #expect(limiter.admit("203.0.113.8") == nil, "another address counts on its own")
        clock.milliseconds += 9_999
        #expect(limiter.admit("203.0.113.7") == 1)
        clock.milliseconds += 1
        #expect(limiter.admit("203.0.113.7") == nil)
        #expect(limiter.admit("203.0.113.7") == 10_000)
        // A whole quiet period gives the whole burst back, and no more.
        clock.milliseconds += 3_600_000
        for _ in 0..<6 { #expect(limiter.admit("203.0.113.7") == nil) }
        #expect(limiter.admit("203.0.113.7") != nil)
    }

    /// Many addresses keep at most the capacity; a forgotten address only asks afresh.
    @Test func theAddressesKeptAreBounded() {
        let clock = FakeClock()
        let limiter = RequestLimiter(rate: RequestRate(count: 1, period: .seconds(60)), capacity: 1_000) { clock.milliseconds }
        #expect(limiter.admit("victim") == nil)
        #expect(limiter.admit("victim") != nil)
        for index in 0..<100_000 { _ = limiter.admit("198.51.\(index / 256).\(index % 256)") }
        #expect(limiter.addresses <= 1_000)
    }

    @Test func ratesAreReadAndMistakesNamed() throws {
        #expect(try RequestRate.parse("600/1m") == RequestRate(count: 600, period: .seconds(60)))
        #expect(try RequestRate.parse(" 10 / 30s ").text == "10/30s")
        for bad in ["", "600", "0/1m", "-1/1m", "x/1m", "10/", "10/soon", "10/0s", "1/2/3"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try RequestRate.parse(bad) }
        }
    }
}
