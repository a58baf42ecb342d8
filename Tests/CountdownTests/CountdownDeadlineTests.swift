import Countdown
import Foundation
import Testing

@Suite struct CountdownDeadlineTests {
    private let utc = TimeZone(identifier: "UTC")!
    private let shanghai = TimeZone(identifier: "Asia/Shanghai")!

    @Test func parsesISO8601WithZuluAndOffsets() throws {
        #expect(try CountdownDeadline.parse("2024-06-01T12:00:00Z", timeZone: utc).timeIntervalSince1970 == 1_717_243_200)
        #expect(try CountdownDeadline.parse("2024-06-01T20:00:00+08:00", timeZone: utc).timeIntervalSince1970 == 1_717_243_200)
        #expect(try CountdownDeadline.parse("2024-06-01T12:00:00.250Z", timeZone: utc).timeIntervalSince1970 == 1_717_243_200.25)
    }

    @Test func parsesUnixSecondsAndMilliseconds() throws {
        #expect(try CountdownDeadline.parse("1717243200", timeZone: utc).timeIntervalSince1970 == 1_717_243_200)
        #expect(try CountdownDeadline.parse("1717243200.5", timeZone: utc).timeIntervalSince1970 == 1_717_243_200.5)
        #expect(try CountdownDeadline.parse("1717243200250", timeZone: utc).timeIntervalSince1970 == 1_717_243_200.25)
        #expect(CountdownDeadline.unixMilliseconds(1_500).timeIntervalSince1970 == 1.5)
    }

    @Test func dateOnlyMeansTheEndOfThatDayInTheTimeZone() throws {
        // 2024-06-02 00:00 in Shanghai (UTC+8) is 2024-06-01 16:00 UTC.
        #expect(try CountdownDeadline.parse("2024-06-01", timeZone: shanghai).timeIntervalSince1970 == 1_717_257_600)
        #expect(try CountdownDeadline.parse("2024-06-01", timeZone: utc).timeIntervalSince1970 == 1_717_286_400)
    }

    @Test func dateOnlyEndOfDayFollowsDaylightSavingChanges() throws {
        // 2024-03-10 is 23 hours long in New York: it ends at 2024-03-11 04:00 UTC (EDT).
        let newYork = TimeZone(identifier: "America/New_York")!
        #expect(try CountdownDeadline.parse("2024-03-10", timeZone: newYork).timeIntervalSince1970 == 1_710_129_600)
    }

    @Test func parsesServerLocalDateTimeInTheGivenTimeZone() throws {
        // 2024-06-01 20:00:00 in Shanghai (UTC+8) is 12:00 UTC.
        #expect(try CountdownDeadline.parse("2024-06-01 20:00:00", timeZone: shanghai).timeIntervalSince1970 == 1_717_243_200)
        #expect(try CountdownDeadline.parse("2024-06-01 12:00:00", timeZone: utc).timeIntervalSince1970 == 1_717_243_200)
        #expect(try CountdownDeadline.parse(" 2024-06-01 12:00:00.250 ", timeZone: utc).timeIntervalSince1970 == 1_717_243_200.25)
        // 01:30 on the night New York falls back exists (the first, EDT one).
        let newYork = TimeZone(identifier: "America/New_York")!
        #expect(try CountdownDeadline.parse("2024-11-03 01:30:00", timeZone: newYork).timeIntervalSince1970 == 1_730_611_800)
    }

    @Test func rejectsLocalDateTimesThatDoNotExist() {
        let newYork = TimeZone(identifier: "America/New_York")!
        for text in ["2024-06-01 24:00:00", "2024-02-30 12:00:00", "2024-06-01 12:60:00", "2024-06-01 12:00",
                     "2024-06-01  12:00:00", "2024-06-01 1:00:00", "2024-06-01 12:00:00."] {
            #expect(throws: CountdownDeadlineError(text: text)) { try CountdownDeadline.parse(text, timeZone: utc) }
        }
        // Skipped by the spring-forward change: 02:00-03:00 never happens that night.
        #expect(throws: CountdownDeadlineError(text: "2024-03-10 02:30:00")) {
            try CountdownDeadline.parse("2024-03-10 02:30:00", timeZone: newYork)
        }
    }

    @Test func rejectsTextThatIsNoDeadline() {
        for text in ["", "soon", "2024-13-01", "2024-6-1", "12:00", "1e9"] {
            #expect(throws: CountdownDeadlineError(text: text)) { try CountdownDeadline.parse(text, timeZone: utc) }
        }
    }
}
