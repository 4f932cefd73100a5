import Foundation

/// Parses every date shape the mapping rules accept, and writes dates in a model's format.
///
/// In: ISO 8601 with separators (`2014-01-02`, `2014-01-02T12:40:08Z`, a space instead of `T`,
/// 1–9 digit fractions kept to the microsecond, `Z`, `±HH:MM`, `±HHMM`, `±HH`, no zone = UTC),
/// ISO 8601 basic (`20000822T132800Z`), and unix time as a number or numeric string (seconds,
/// milliseconds when the value is ≥ 10^11, microseconds when ≥ 10^14). Out: always UTC.
enum DateCoding {
  /// Microseconds since 1970 for a date (the stored precision).
  static func microseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
  }

  static func date(microseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
  }

  /// The date for a JSON value, or nil when it is no date shape we accept.
  static func date(from value: JSONValue) -> Date? {
    switch value {
    case .number(let number):
      return unixDate(number.doubleValue)
    case .string(let text):
      if let unix = unixString(text) { return unixDate(unix) }
      // Year 0000 parses as a shape but is outside what a store takes.
      guard let date = parseISO(text), date.timeIntervalSince1970 >= earliestSeconds else { return nil }
      return date
    default:
      return nil
    }
  }

  /// The date a JSON string gives as `date(from:)` reads it, from the string's bytes (the
  /// text between its quotes, with no escape in it).
  static func date(fromStringBytes bytes: UnsafeBufferPointer<UInt8>) -> Date? {
    if let unix = unixNumber(bytes) { return unixDate(unix) }
    guard let date = parseISO(bytes: bytes), date.timeIntervalSince1970 >= earliestSeconds else { return nil }
    return date
  }

  /// The date an ISO 8601 text gives, in every form the import accepts (the whole text,
  /// nothing after it), or nil.
  static func isoDate(_ text: String) -> Date? {
    guard let date = parseISO(text), date.timeIntervalSince1970 >= earliestSeconds else { return nil }
    return date
  }

  /// Seconds since 1970, or milliseconds when |v| ≥ 10^11, or microseconds when |v| ≥ 10^14
  /// (Sync's rule); nil outside the years 0001–9999.
  private static func unixDate(_ number: Double) -> Date? {
    guard number.isFinite else { return nil }
    let magnitude = abs(number)
    let seconds = magnitude >= 1e14 ? number / 1_000_000 : magnitude >= 1e11 ? number / 1000 : number
    guard seconds >= earliestSeconds, seconds <= latestSeconds else { return nil }
    return date(microseconds: Int64((seconds * 1_000_000).rounded()))
  }

  /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970: the dates a store
  /// takes, in any shape.
  static let earliestSeconds: Double = -62_135_596_800
  static let latestSeconds: Double = 253_402_300_799

  /// A string that is a plain decimal number (`1441888808`, `1441888808.5`), as seconds.
  private static func unixString(_ text: String) -> Double? {
    guard isUnixNumber(text.utf8.span) else { return nil }
    return Double(text)
  }

  /// `unixString` of the text with these bytes.
  private static func unixNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    guard isUnixNumber(bytes.span) else { return nil }
    return Double(String(decoding: bytes, as: UTF8.self))
  }

  /// Whether the bytes are a plain decimal number: an ISO date, the usual input, is turned
  /// down at its first `-`.
  private static func isUnixNumber(_ bytes: Span<UInt8>) -> Bool {
    var sawDigit = false
    var dots = 0
    for index in bytes.indices {
      switch bytes[index] {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
      case UInt8(ascii: "-") where index == 0: continue
      case UInt8(ascii: "."): dots += 1
      default: return false
      }
    }
    return sawDigit && dots <= 1
  }

  /// Reads an ISO 8601 text left to right. A struct rather than nested functions over a
  /// captured index, which every date of an import paid for in exclusivity checks.
  private struct ISOScanner {
    /// The text's UTF-8 where it lies, valid for the `withUTF8` call `parseISO` makes (the
    /// scanner does not outlive it); every read checks `index` against `count` first.
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var atEnd: Bool { index >= bytes.count }

    var atDigit: Bool { index < bytes.count && bytes[index] >= 0x30 && bytes[index] <= 0x39 }

    func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

    mutating func digits(_ count: Int) -> Int? {
      guard index + count <= bytes.count else { return nil }
      var value = 0
      for offset in 0..<count {
        let byte = bytes[index + offset]
        guard byte >= 0x30 && byte <= 0x39 else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      index += count
      return value
    }

    mutating func take(_ byte: UInt8) -> Bool {
      guard peek(byte) else { return false }
      index += 1
      return true
    }
  }

  /// The date an ISO 8601 text gives, read from its UTF-8 in place: a date, over 15 bytes,
  /// is a string with storage of its own, which a copy into an array allocated again.
  private static func parseISO(_ text: String) -> Date? {
    var text = text
    return text.withUTF8 { parseISO(bytes: $0) }
  }

  private static func parseISO(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
    var scanner = ISOScanner(bytes: bytes)
    guard let year = scanner.digits(4) else { return nil }
    let basic = !scanner.peek(UInt8(ascii: "-"))
    if !basic { scanner.index += 1 }
    guard let month = scanner.digits(2) else { return nil }
    if !basic, !scanner.take(UInt8(ascii: "-")) { return nil }
    guard let day = scanner.digits(2) else { return nil }
    var hour = 0
    var minute = 0
    var second = 0
    var micros = 0
    var offsetSeconds = 0
    if !scanner.atEnd {
      guard
        scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t"))
          || (!basic && scanner.take(UInt8(ascii: " ")))
      else { return nil }
      guard let h = scanner.digits(2) else { return nil }
      hour = h
      if !basic, !scanner.take(UInt8(ascii: ":")) { return nil }
      guard let m = scanner.digits(2) else { return nil }
      minute = m
      let hasSeconds = basic ? scanner.atDigit : scanner.take(UInt8(ascii: ":"))
      if hasSeconds {
        guard let s = scanner.digits(2) else { return nil }
        second = s
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
          var count = 0
          var fraction = 0
          while scanner.atDigit {
            if count < 7 { fraction = fraction * 10 + Int(bytes[scanner.index] - 0x30) }
            count += 1
            scanner.index += 1
          }
          guard count >= 1, count <= 9 else { return nil }
          // Keep 7 digits, then round to microseconds.
          let scaled = count < 7 ? fraction * Int(pow(10, Double(7 - count))) : fraction
          micros = (scaled + 5) / 10
        }
      }
      if !scanner.atEnd {
        if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
        } else if scanner.peek(UInt8(ascii: "+")) || scanner.peek(UInt8(ascii: "-")) {
          let sign = scanner.peek(UInt8(ascii: "-")) ? -1 : 1
          scanner.index += 1
          guard let offsetHours = scanner.digits(2), offsetHours <= 23 else { return nil }
          var offsetMinutes = 0
          if !scanner.atEnd {
            _ = scanner.take(UInt8(ascii: ":"))
            guard let minutes = scanner.digits(2), minutes <= 59 else { return nil }
            offsetMinutes = minutes
          }
          offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
          return nil
        }
      }
    }
    guard scanner.atEnd else { return nil }
    guard (1...12).contains(month), (1...daysInMonth(year, month)).contains(day), hour <= 24, minute <= 59, second <= 60
    else {
      return nil
    }
    let days = daysFromCivil(year: year, month: month, day: day)
    let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
    return date(microseconds: seconds * 1_000_000 + Int64(micros))
  }

  private static func daysInMonth(_ year: Int, _ month: Int) -> Int {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// The JSON form of a date in `format`, in UTC; a fraction is written only when non-zero.
  static func jsonValue(from date: Date, format: DateFormat) -> JSONValue {
    if format == .unix {
      let micros = microseconds(date)
      if micros % 1_000_000 == 0 { return .number(JSONNumber(micros / 1_000_000)) }
      return .number(JSONNumber(Decimal(micros) / 1_000_000))
    }
    return .string(string(from: date, format: format))
  }

  /// `2014-01-02T12:40:08Z` (or the basic form `20140102T124008Z`), with a fraction of up to
  /// six digits when it is not zero. Written as bytes: the date of every exported object
  /// passes here.
  static func string(from date: Date, format: DateFormat) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(32)
    appendText(of: date, format: format, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends the text `string(from:format:)` gives, as UTF-8 (an export writes it straight
  /// into its output).
  static func appendText(of date: Date, format: DateFormat, to bytes: inout [UInt8]) {
    let micros = microseconds(date)
    var seconds = micros / 1_000_000
    var fraction = Int(micros % 1_000_000)
    if fraction < 0 {
      fraction += 1_000_000
      seconds -= 1
    }
    let days = Int((seconds - ((seconds % 86_400) + 86_400) % 86_400) / 86_400)
    let secondOfDay = Int(((seconds % 86_400) + 86_400) % 86_400)
    let (year, month, day) = civilFromDays(days)
    let separators = format != .iso8601Basic
    // Written through one span: a sign, at most 19 digits of year, 15 of the rest, the
    // separators and at most 7 of the fraction.
    bytes.append(addingCapacity: 64) { output in
      if year < 0 { output.append(UInt8(ascii: "-")) }
      appendDigits(abs(year), width: 4, to: &output)
      if separators { output.append(UInt8(ascii: "-")) }
      appendDigits(month, width: 2, to: &output)
      if separators { output.append(UInt8(ascii: "-")) }
      appendDigits(day, width: 2, to: &output)
      output.append(UInt8(ascii: "T"))
      appendDigits(secondOfDay / 3600, width: 2, to: &output)
      if separators { output.append(UInt8(ascii: ":")) }
      appendDigits(secondOfDay / 60 % 60, width: 2, to: &output)
      if separators { output.append(UInt8(ascii: ":")) }
      appendDigits(secondOfDay % 60, width: 2, to: &output)
      if fraction != 0 {
        var width = 6
        while fraction % 10 == 0 {
          fraction /= 10
          width -= 1
        }
        output.append(UInt8(ascii: "."))
        appendDigits(fraction, width: width, to: &output)
      }
      output.append(UInt8(ascii: "Z"))
    }
  }

  /// The decimal digits of a non-negative `value`, zero-padded to at least `width`.
  private static func appendDigits(_ value: Int, width: Int, to output: inout OutputSpan<UInt8>) {
    // A month, a day, an hour, a minute, a second.
    if width == 2, (0..<100).contains(value) {
      output.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10))
      output.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10))
      return
    }
    var digits = 1
    var scale = 1
    while value / scale >= 10 {
      scale *= 10
      digits += 1
    }
    for _ in digits..<max(width, digits) { output.append(UInt8(ascii: "0")) }
    while scale > 0 {
      output.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / scale % 10))
      scale /= 10
    }
  }
}
