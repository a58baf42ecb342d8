@testable import RedisClient
import Testing

/// A connection's reckoning of Redis's clock (`RedisClock`): where a reading is placed,
/// when it is read again, and which of two readings is kept.
@Suite("Redis's clock, reckoned")
struct RedisClockTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// One `TIME` read: sent at `sent` ms, Redis's answer `redis` µs, received at `received` ms.
    func exchange(_ clock: inout RedisClock, redis: Int64, sent: Int, received: Int) {
        clock.sent(at: at(sent))
        clock.received(redisMicroseconds: redis, sent: at(sent), received: at(received))
    }

    @Test func aReadingIsPlacedHalfWayAndCarriedForwardInWholeMilliseconds() {
        var clock = RedisClock()
        #expect(clock.milliseconds(at: at(0)) == nil && clock.isDue(at: at(0)))
        clock.sent(at: at(0))
        #expect(!clock.isDue(at: at(0)), "one reading at a time")
        // Redis said 1 000 000.600 ms; the reply came 4 ms after the request.
        clock.received(redisMicroseconds: 1_000_000_600, sent: at(0), received: at(4))
        #expect(clock.milliseconds(at: at(2)) == 1_000_000)
        #expect(clock.milliseconds(at: at(3)) == 1_000_001)  // .600 + 1 ms: the µs are kept
        #expect(clock.milliseconds(at: at(1_002)) == 1_001_000)
    }

    @Test func aSlowReadingIsReadAgainWithinASecondAQuickOneAfterTen() {
        var slow = RedisClock()
        exchange(&slow, redis: 5_000_000, sent: 0, received: 50)
        #expect(!slow.isDue(at: at(1_000)) && slow.isDue(at: at(1_030)))

        var quick = RedisClock()
        exchange(&quick, redis: 5_000_000, sent: 0, received: 1)
        #expect(!quick.isDue(at: at(9_000)) && quick.isDue(at: at(10_010)))
    }

    @Test func aLongerRoundTripReplacesTheHeldReadingOnlyOnceItIsOldAndNotFarFromTheShortest() {
        var clock = RedisClock()
        exchange(&clock, redis: 1_000_000, sent: 0, received: 2)  // the shortest: 2 ms
        exchange(&clock, redis: 9_999_999_000, sent: 100, received: 103)
        #expect(clock.reading?.redisMicroseconds == 1_000_000, "a fresh reading with a shorter round trip stays")
        exchange(&clock, redis: 9_999_999_000, sent: 12_000, received: 12_005)
        #expect(clock.reading?.redisMicroseconds == 1_000_000, "5 ms is more than twice the shortest")
        exchange(&clock, redis: 2_000_000, sent: 13_100, received: 13_103)
        #expect(clock.reading?.redisMicroseconds == 2_000_000, "an old reading gives way to one within twice the shortest")
        exchange(&clock, redis: 3_000_000, sent: 13_200, received: 13_201)
        #expect(clock.reading?.redisMicroseconds == 3_000_000, "a shorter round trip always wins")
    }

    @Test func readsAreAtMostOneASecondWhileTheHeldReadingKeepsWinning() {
        var clock = RedisClock()
        exchange(&clock, redis: 1_000_000, sent: 0, received: 1)
        exchange(&clock, redis: 2_000_000, sent: 10_500, received: 10_510)  // loses
        #expect(clock.reading?.redisMicroseconds == 1_000_000)
        #expect(!clock.isDue(at: at(11_000)) && clock.isDue(at: at(11_600)))
    }
}
