import Countdown
import Testing

@Suite struct CountdownValueTests {
    @Test func roundsRemainingMillisecondsUp() {
        #expect(CountdownValue(remainingMilliseconds: 59_001).totalSeconds == 60)
        #expect(CountdownValue(remainingMilliseconds: 60_000).totalSeconds == 60)
        #expect(CountdownValue(remainingMilliseconds: 1).totalSeconds == 1)
        #expect(CountdownValue(remainingMilliseconds: 1_000).totalSeconds == 1)
        #expect(CountdownValue(remainingMilliseconds: 1_001).totalSeconds == 2)
        #expect(CountdownValue(remainingMilliseconds: 0).totalSeconds == 0)
        #expect(CountdownValue(remainingMilliseconds: -5).totalSeconds == 0)
        #expect(CountdownValue(remaining: .nanoseconds(1)).totalSeconds == 1)
    }

    @Test func splitsIntoDaysHoursMinutesSeconds() {
        let value = CountdownValue(totalSeconds: 2 * 86_400 + 3 * 3_600 + 4 * 60 + 5)
        #expect([value.days, value.hours, value.minutes, value.seconds] == [2, 3, 4, 5])
    }

    @Test func formatsSecondsClockAndDays() {
        #expect(CountdownValue(totalSeconds: 42).formatted(.seconds) == "42s")
        #expect(CountdownValue(totalSeconds: 42).formatted(.clock) == "0:42")
        #expect(CountdownValue(totalSeconds: 65).formatted(.clock) == "1:05")
        #expect(CountdownValue(totalSeconds: 3_723).formatted(.clock) == "1:02:03")
        #expect(CountdownValue(totalSeconds: 2 * 86_400 + 3 * 3_600 + 4 * 60 + 5).formatted(.clock) == "2d 03:04:05")
        #expect(CountdownValue(totalSeconds: 42).resendPrompt() == "Resend in 42s")
    }

    @Test func paddedClockAlwaysShowsTwoDigitHours() {
        #expect(CountdownValue(totalSeconds: 42).formatted(.paddedClock) == "00:00:42")
        #expect(CountdownValue(totalSeconds: 3_723).formatted(.paddedClock) == "01:02:03")
        #expect(CountdownValue(totalSeconds: 86_399).formatted(.paddedClock) == "23:59:59")
        #expect(CountdownValue(totalSeconds: 2 * 86_400 + 5).formatted(.paddedClock, strings: .chinese) == "2天 00:00:05")
        #expect(CountdownValue(totalSeconds: 65).resendPrompt(.paddedClock) == "Resend in 00:01:05")
    }

    @Test func formatsChineseThroughTheLocalisationHook() {
        #expect(CountdownValue(totalSeconds: 42).resendPrompt(strings: .chinese) == "42秒后重新发送")
        #expect(CountdownValue(totalSeconds: 2 * 86_400 + 5).formatted(.clock, strings: .chinese) == "2天 00:00:05")
        let custom = CountdownStrings(seconds: { "\($0) Sek." }, days: { "\($0) T." }, resendPrompt: { "Erneut in \($0)" })
        #expect(CountdownValue(totalSeconds: 7).resendPrompt(strings: custom) == "Erneut in 7 Sek.")
    }

    /// 100 000 seeded random remaining times: never `9:60`, never negative, never 0 while
    /// time remains, and always `ceil` of the milliseconds.
    @Test func randomMillisecondsNeverShowImpossibleOrZeroValues() {
        var generator = SplitMix64(seed: 0x5EED_C0DE)
        for round in 0..<100_000 {
            // Mostly short cooldowns, some up to ten days, a few at or below zero.
            let milliseconds: Int64 = switch round % 10 {
            case 0: Int64.random(in: -2_000...1_000, using: &generator)
            case 1: Int64.random(in: 0...864_000_000, using: &generator)
            default: Int64.random(in: 0...7_200_000, using: &generator)
            }
            let value = CountdownValue(remainingMilliseconds: milliseconds)
            let text = value.formatted(.clock)
            #expect(value.totalSeconds >= 0)
            if milliseconds > 0 {
                #expect(value.totalSeconds >= 1)
                #expect(value.totalSeconds * 1_000 - milliseconds >= 0)
                #expect(value.totalSeconds * 1_000 - milliseconds < 1_000)
            } else {
                #expect(value.totalSeconds == 0)
            }
            #expect((0...59).contains(value.seconds) && (0...59).contains(value.minutes) && (0...23).contains(value.hours))
            #expect(value.days * 86_400 + value.hours * 3_600 + value.minutes * 60 + value.seconds == value.totalSeconds)
            #expect(!text.contains(":6") && !text.contains(":7") && !text.contains(":8") && !text.contains(":9"))
            #expect(!text.contains("-"))
        }
    }
}
