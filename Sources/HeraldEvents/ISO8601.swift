/// Times as Herald prints them: ISO 8601 in UTC with milliseconds (`2025-08-05T09:16:40.123Z`),
/// computed from the integer milliseconds (no floating point, which cannot hold most
/// thousandths exactly) and without Foundation.
public enum ISO8601 {
    /// Milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func string(milliseconds: Int64) -> String {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        let milli = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(dateAndTime(seconds: seconds)).\(milli)Z"
    }

    /// Seconds since the Unix epoch (a `date`, `now` or `mutedUntil`) as `YYYY-MM-DDTHH:MM:SSZ`,
    /// for every `Int64`: years past 9999 are written in full.
    public static func string(seconds: Int64) -> String {
        "\(dateAndTime(seconds: seconds))Z"
    }

    /// `YYYY-MM-DDTHH:MM:SS` of seconds since the Unix epoch.
    private static func dateAndTime(seconds: Int64) -> String {
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(daysSinceEpoch: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = year >= 0 && year < 10_000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)):\(two(secondOfDay % 60))"
    }

    /// Floor division and its non-negative remainder.
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// The proleptic Gregorian date of a day count from 1970-01-01, by 400-year eras of
    /// 146,097 days, counted from March so that the leap day ends the year.
    static func civil(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
