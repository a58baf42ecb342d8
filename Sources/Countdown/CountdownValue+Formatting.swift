/// How a ``CountdownValue`` is written.
public enum CountdownStyle: Sendable, Hashable {
    /// Total seconds with a unit: `42s`, `125s`.
    case seconds
    /// A clock that grows only as needed: `0:42`, `1:05`, `1:02:03`, `2d 03:04:05`.
    case clock
    /// By size, for a prompt: seconds under a minute (`42s`), `m:ss` under an hour
    /// (`14:59`), `h:mm:ss` above (`1:02:03`, `26:00:00`), so a 15-minute lock does not
    /// read "900s".
    case bySize
    /// A clock that always shows two-digit hours, minutes and seconds: `00:00:42`,
    /// `01:02:03`, `2d 03:04:05` (the `hh:mm:ss` of a fixed-width label).
    case paddedClock
}

extension CountdownValue {
    /// The value written in `style` with `strings` (English by default).
    public func formatted(_ style: CountdownStyle = .clock, strings: CountdownStrings = .english) -> String {
        switch style {
        case .seconds:
            return strings.seconds(totalSeconds)
        case .clock:
            return days > 0 ? formatted(.paddedClock, strings: strings) : clock(hours: hours)  // the same past a day
        case .bySize:
            return totalSeconds < 60 ? strings.seconds(totalSeconds) : clock(hours: totalSeconds / 3_600)
        case .paddedClock:
            let clock = "\(Self.twoDigits(hours)):\(Self.twoDigits(minutes)):\(Self.twoDigits(seconds))"
            return days > 0 ? "\(strings.days(days)) \(clock)" : clock
        }
    }

    /// The resend prompt: `Resend in 42s`, or `42秒后重新发送` with ``CountdownStrings/chinese``.
    public func resendPrompt(_ style: CountdownStyle = .seconds, strings: CountdownStrings = .english) -> String {
        strings.resendPrompt(formatted(style, strings: strings))
    }

    /// `m:ss` under an hour, else `h:mm:ss` with `hours` (which may count whole days too).
    private func clock(hours: Int64) -> String {
        hours == 0 ? "\(minutes):\(Self.twoDigits(seconds))" : "\(hours):\(Self.twoDigits(minutes)):\(Self.twoDigits(seconds))"
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
