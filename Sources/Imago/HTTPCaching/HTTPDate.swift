import Foundation

/// HTTP dates (RFC 9110 §5.6.7), parsed and formatted without `DateFormatter`,
/// which costs microseconds per call and depends on the locale: a disk hit
/// parses up to four of them.
package enum HTTPDate {
    /// Parses an HTTP date as RFC 9110 §5.6.7 writes it and browsers read
    /// it: the IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") and the two
    /// obsolete forms (RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" and asctime
    /// "Sun Nov  6 08:49:37 1994"), names in any letter case, surrounding
    /// spaces and tabs ignored. Anything else is `nil`: another time zone,
    /// a two-digit year or dashes in the IMF form, a missing comma, doubled
    /// spaces, a one-digit hour, a day the month does not have. Callers
    /// treat `nil` as a date in the past where the RFC says so.
    package static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { all in
            let isSpace = { (byte: UInt8) in byte == space || byte == tab }
            guard let first = all.firstIndex(where: { !isSpace($0) }), let last = all.lastIndex(where: { !isSpace($0) }) else { return nil }
            return parse(UnsafeBufferPointer(rebasing: all[first...last]))
        }
    }

    private typealias Bytes = Slice<UnsafeBufferPointer<UInt8>>

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        let fields: (year: Int, month: Int, day: Int, clock: Int)?
        if bytes.count == 29 {
            fields = imfFixdate(bytes)
        } else if bytes.count == 24 {
            fields = asctime(bytes)
        } else {
            fields = rfc850(bytes)
        }
        guard let (year, month, day, clock) = fields, (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(daysSince1970(year: year, month: month, day: day) * 86_400 + clock))
    }

    /// "Sun, 06 Nov 1994 08:49:37 GMT"
    private static func imfFixdate(_ b: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int, Int)? {
        guard weekdays.firstIndex(where: { matches(b[0..<3], $0) }) != nil, b[3] == comma, b[4] == space, b[7] == space, b[11] == space,
            b[16] == space, b[25] == space, matches(b[26..<29], "gmt"),
            let day = digits(b[5..<7]), let month = monthNumber(b[8..<11]), let year = digits(b[12..<16]), let clock = clock(b[17..<25])
        else { return nil }
        return (year, month, day, clock)
    }

    /// "Sun Nov  6 08:49:37 1994" (the day as two digits or a space and one).
    private static func asctime(_ b: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int, Int)? {
        guard weekdays.firstIndex(where: { matches(b[0..<3], $0) }) != nil, b[3] == space, b[7] == space, b[10] == space, b[19] == space,
            let month = monthNumber(b[4..<7]), let day = b[8] == space ? digits(b[9..<10]) : digits(b[8..<10]),
            let clock = clock(b[11..<19]), let year = digits(b[20..<24])
        else { return nil }
        return (year, month, day, clock)
    }

    /// "Sunday, 06-Nov-94 08:49:37 GMT": a two-digit year more than 50
    /// years ahead of this one is taken from the century before (RFC 9110 §5.6.7).
    private static func rfc850(_ b: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int, Int)? {
        guard let comma = b.firstIndex(of: comma), b.count == comma + 24,
            longWeekdays.contains(where: { matches(b[0..<comma], $0) }), b[comma + 1] == space, b[comma + 4] == dash,
            b[comma + 8] == dash, b[comma + 11] == space, b[comma + 20] == space, matches(b[(comma + 21)...], "gmt"),
            let day = digits(b[(comma + 2)..<(comma + 4)]), let month = monthNumber(b[(comma + 5)..<(comma + 8)]),
            let shortYear = digits(b[(comma + 9)..<(comma + 11)]), let clock = clock(b[(comma + 12)..<(comma + 20)])
        else { return nil }
        let thisYear = civilDate(daysSince1970: Int(Date().timeIntervalSince1970) / 86_400).year
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return (year, month, day, clock)
    }

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let comma = UInt8(ascii: ",")
    private static let dash = UInt8(ascii: "-")

    /// "08:49:37" as seconds into the day (a leap second counts as 59).
    private static func clock(_ b: Bytes) -> Int? {
        let start = b.startIndex
        guard b[start + 2] == UInt8(ascii: ":"), b[start + 5] == UInt8(ascii: ":"),
            let h = digits(b[start..<(start + 2)]), let m = digits(b[(start + 3)..<(start + 5)]), let s = digits(b[(start + 6)..<(start + 8)]),
            h < 24, m < 60, s <= 60
        else { return nil }
        return h * 3600 + m * 60 + min(s, 59)
    }

    private static func digits(_ b: Bytes) -> Int? {
        var value = 0
        for byte in b {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// Whether `b` spells the letters of `name` in any letter case.
    private static func matches(_ b: Bytes, _ name: String) -> Bool {
        b.count == name.utf8.count
            && zip(b, name.utf8).allSatisfy { byte, letter in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) && byte | 0x20 == letter | 0x20
            }
    }

    private static func monthNumber(_ b: Bytes) -> Int? {
        months.firstIndex { matches(b, $0) }.map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Formats `date` as an IMF-fixdate, the form servers must send.
    package static func format(_ date: Date) -> String {
        let (days, year, month, day, clock) = calendar(second: Int(date.timeIntervalSince1970.rounded(.down)))
        let weekday = weekdays[((days % 7) + 10) % 7]  // 1970-01-01 was a Thursday (index 3)
        return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(clock / 3600)):\(two(clock / 60 % 60)):\(two(clock % 60)) GMT"
    }

    /// Formats `date` as ISO 8601 in UTC with milliseconds
    /// (`2026-11-25T19:40:09.123Z`), as log lines print it.
    package static func iso8601(_ date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1_000).rounded(.down))
        let total = milliseconds >= 0 ? milliseconds / 1_000 : (milliseconds - 999) / 1_000
        let (_, year, month, day, clock) = calendar(second: total)
        let millis = milliseconds - total * 1_000
        let fraction = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(year)-\(two(month))-\(two(day))T\(two(clock / 3600)):\(two(clock / 60 % 60)):\(two(clock % 60)).\(fraction)Z"
    }

    /// The day (since 1970), its civil date and the second within it, of a second since 1970.
    private static func calendar(second total: Int) -> (days: Int, year: Int, month: Int, day: Int, clock: Int) {
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        return (days, year, month, day, total - days * 86_400)
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longWeekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Days from 1970-01-01 to a proleptic Gregorian date: count from March,
    /// so that the leap day falls at the end of the counted year.
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysSince1970(year:month:day:)``.
    static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
