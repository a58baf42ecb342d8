/// RFC 3339 UTC timestamps with milliseconds (`2026-11-30T08:09:05.123Z`), written
/// with integer arithmetic: no formatter, no time zone database, no allocation.
enum RFC3339 {
    static func append(_ milliseconds: Int64, to bytes: inout [UInt8]) {
        let days = floorDivide(milliseconds, 86_400_000)
        let msOfDay = milliseconds - days * 86_400_000
        let (year, month, day) = civilDate(daysSince1970: days)
        appendDigits(year, 4, &bytes); bytes.append(UInt8(ascii: "-"))
        appendDigits(month, 2, &bytes); bytes.append(UInt8(ascii: "-"))
        appendDigits(day, 2, &bytes); bytes.append(UInt8(ascii: "T"))
        appendDigits(msOfDay / 3_600_000, 2, &bytes); bytes.append(UInt8(ascii: ":"))
        appendDigits(msOfDay / 60_000 % 60, 2, &bytes); bytes.append(UInt8(ascii: ":"))
        appendDigits(msOfDay / 1000 % 60, 2, &bytes); bytes.append(UInt8(ascii: "."))
        appendDigits(msOfDay % 1000, 3, &bytes); bytes.append(UInt8(ascii: "Z"))
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : (a - b + 1) / b
    }

    /// Howard Hinnant's days-to-civil algorithm.
    private static func civilDate(daysSince1970 days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func appendDigits(_ value: Int64, _ width: Int, _ bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
