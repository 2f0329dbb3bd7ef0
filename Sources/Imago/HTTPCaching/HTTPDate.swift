import Foundation

/// HTTP dates (RFC 9110 §5.6.7), parsed and formatted without `DateFormatter`,
/// which costs microseconds per call and depends on the locale: a disk hit
/// parses up to four of them.
package enum HTTPDate {
    /// Parses the preferred IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") and
    /// the two obsolete forms (RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" and
    /// asctime "Sun Nov  6 08:49:37 1994"). `nil` for anything else, which
    /// callers treat as a date in the past where the RFC says so.
    package static func parse(_ text: String) -> Date? {
        let fields = text.utf8.split(whereSeparator: { $0 == 0x20 || $0 == 0x2C || $0 == 0x2D || $0 == 0x3A })
        guard fields.count >= 7 else { return nil }
        let day: Int?
        let month: Int?
        let year: Int?
        let clock: Int?
        if let asctimeMonth = monthNumber(fields[1]) {
            // asctime: weekday month day hh mm ss yyyy
            month = asctimeMonth
            day = number(fields[2])
            clock = seconds(fields[3], fields[4], fields[5])
            year = number(fields[6])
        } else {
            // IMF-fixdate and RFC 850: weekday day month year hh mm ss GMT
            guard fields.count >= 8, String(decoding: fields[7], as: UTF8.self) == "GMT" else { return nil }
            day = number(fields[1])
            month = monthNumber(fields[2])
            year = number(fields[3]).map { $0 < 100 ? ($0 < 70 ? 2000 + $0 : 1900 + $0) : $0 }
            clock = seconds(fields[4], fields[5], fields[6])
        }
        guard let day, let month, let year, let clock, (1...31).contains(day), (1...9999).contains(year) else { return nil }
        let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + clock
        return Date(timeIntervalSince1970: TimeInterval(seconds))
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

    private static func monthNumber(_ field: Substring.UTF8View) -> Int? {
        guard field.count == 3 else { return nil }
        let name = String(decoding: field, as: UTF8.self)
        return months.firstIndex(of: name).map { $0 + 1 }
    }

    private static func number(_ field: Substring.UTF8View) -> Int? {
        guard !field.isEmpty, field.count <= 4 else { return nil }
        var value = 0
        for byte in field {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static func seconds(_ hours: Substring.UTF8View, _ minutes: Substring.UTF8View, _ seconds: Substring.UTF8View) -> Int? {
        guard let h = number(hours), let m = number(minutes), let s = number(seconds),
            h < 24, m < 60, s <= 60
        else { return nil }
        return h * 3600 + m * 60 + min(s, 59)
    }

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
