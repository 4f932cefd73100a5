import Foundation

/// Turns a JSON value into a typed attribute value, strictly: `"20"` is 20 for an integer
/// attribute, `"20x"` is an error, never 20.
enum ValueCoercion {
  /// The value for `type`, or the reason it cannot be one. `null` is handled by the caller.
  static func coerce(_ value: JSONValue, to type: AttributeType) -> Result<AttributeValue, CoercionFailure> {
    switch type {
    case .string:
      switch value {
      case .string(let text): return .success(.string(text))
      case .number(let number): return .success(.string(number.literal))
      case .bool(let flag): return .success(.string(flag ? "true" : "false"))
      default: return .failure(.init("expected a string, found \(value.kindDescription)"))
      }
    case .int16, .int32, .int64:
      let bounds: ClosedRange<Int64> =
        type == .int16
        ? Int64(Int16.min)...Int64(Int16.max)
        : type == .int32 ? Int64(Int32.min)...Int64(Int32.max) : Int64.min...Int64.max
      let number: JSONNumber
      switch self.number(value, kind: "a whole number") {
      case .success(let found): number = found
      case .failure(let failure): return .failure(failure)
      }
      guard let integer = number.int64Value else { return .failure(.init("\(number.literal) is not a whole number")) }
      guard bounds.contains(integer) else { return .failure(.init("\(integer) is out of range for \(type.rawValue)")) }
      return .success(.integer(integer))
    case .double, .float:
      let number: JSONNumber
      switch self.number(value, kind: "a number") {
      case .success(let found): number = found
      case .failure(let failure): return .failure(failure)
      }
      // -0.0 is stored as 0: one value, one identity.
      let double = number.doubleValue == 0 ? 0 : number.doubleValue
      guard double.isFinite else { return .failure(.init("\(number.literal) is out of range for \(type.rawValue)")) }
      guard type == .float else { return .success(.double(double)) }
      let float = Float(double)
      guard float.isFinite else { return .failure(.init("\(number.literal) is out of range for float")) }
      return .success(.float(float))
    case .decimal:
      let number: JSONNumber
      switch self.number(value, kind: "a decimal number") {
      case .success(let found): number = found
      case .failure(let failure): return .failure(failure)
      }
      guard significantDigits(number.literal) <= 38 else {
        return .failure(.init("\(number.literal) has more than 38 significant digits, more than a decimal keeps"))
      }
      guard let decimal = number.decimalValue, !decimal.isNaN else {
        return .failure(.init("\(number.literal) is not a decimal number"))
      }
      return .success(.decimal(decimal.isZero ? 0 : decimal))
    case .bool:
      switch value {
      case .bool(let flag): return .success(.bool(flag))
      case .number(let number):
        if number.int64Value == 1 { return .success(.bool(true)) }
        if number.int64Value == 0 { return .success(.bool(false)) }
        return .failure(.init("\(number.literal) is not a boolean (only 0 and 1 are)"))
      case .string(let text):
        switch text.lowercased() {
        case "true", "yes", "1": return .success(.bool(true))
        case "false", "no", "0": return .success(.bool(false))
        default: return .failure(.init("\"\(text)\" is not a boolean (true/false, yes/no, 1/0)"))
        }
      default: return .failure(.init("expected a boolean, found \(value.kindDescription)"))
      }
    case .date:
      guard let date = DateCoding.date(from: value) else {
        if case .string(let text) = value {
          return .failure(.init("\"\(text)\" is not a date (ISO 8601 or unix time)"))
        }
        return .failure(.init("expected a date string or unix time, found \(value.kindDescription)"))
      }
      return .success(.date(date))
    case .uuid:
      guard case .string(let text) = value else {
        return .failure(.init("expected a UUID string, found \(value.kindDescription)"))
      }
      guard let uuid = UUID(uuidString: text) else { return .failure(.init("\"\(text)\" is not a UUID")) }
      return .success(.uuid(uuid))
    case .url:
      guard case .string(let text) = value else {
        return .failure(.init("expected a URL string, found \(value.kindDescription)"))
      }
      guard !text.isEmpty, let url = URL(string: text) else { return .failure(.init("\"\(text)\" is not a URL")) }
      return .success(.url(url))
    case .binary:
      guard case .string(let text) = value else {
        return .failure(.init("expected base64 text, found \(value.kindDescription)"))
      }
      guard let data = Data(base64Encoded: text) else { return .failure(.init("the text is not valid base64")) }
      return .success(.binary(data))
    case .json:
      return .success(.json(value))
    }
  }

  /// A stored value as JSON: numbers as numbers, dates in `dateFormat` (UTC), binary as
  /// base64, UUIDs and URLs as strings. Export writes values so; a migration coerces a value
  /// to an attribute's new type from it.
  static func json(_ value: AttributeValue, dateFormat: DateFormat) -> JSONValue {
    switch value {
    case .string(let text): .string(text)
    case .integer(let number): .number(JSONNumber(number))
    case .double(let number): .number(JSONNumber(number))
    case .float(let number): .number(JSONNumber(Double(number.description) ?? Double(number)))
    case .decimal(let number): .number(JSONNumber(number))
    case .bool(let flag): .bool(flag)
    case .date(let date): DateCoding.jsonValue(from: date, format: dateFormat)
    case .uuid(let uuid): .string(uuid.uuidString)
    case .url(let url): .string(url.absoluteString)
    case .binary(let data): .string(data.base64EncodedString())
    case .json(let json): json
    }
  }

  /// `value` as a value of `type`: itself when it is one already, else coerced from its JSON
  /// form by the import rules (`"20"` to 20, 20 to `"20"`).
  static func coerce(_ value: AttributeValue, to type: AttributeType) -> Result<AttributeValue, CoercionFailure> {
    // An integer as text, the usual change, without its JSON form: that form's literal is
    // the integer's decimal digits (`JSONNumber.init(_:)`), which this gives directly.
    if type == .string, case .integer(let number) = value { return .success(.string(String(number))) }
    return coerce(json(value, dateFormat: .iso8601), to: type)
  }

  /// The significant digits of a number literal's mantissa (leading and trailing zeros not
  /// counted).
  static func significantDigits(_ literal: String) -> Int {
    let mantissa = literal.prefix { $0 != "e" && $0 != "E" }.filter(\.isNumber)
    return mantissa.drop { $0 == "0" }.reversed().drop { $0 == "0" }.count
  }

  /// A JSON number, or a string that is exactly one; `kind` names what was expected.
  private static func number(_ value: JSONValue, kind: String) -> Result<JSONNumber, CoercionFailure> {
    switch value {
    case .number(let number): return .success(number)
    case .string(let text):
      guard let number = numericString(text) else { return .failure(.init("\"\(text)\" is not \(kind)")) }
      return .success(number)
    default: return .failure(.init("expected \(kind), found \(value.kindDescription)"))
    }
  }

  /// A string that is exactly a JSON number (no spaces, no hex, no `inf`), as that number.
  static func numericString(_ text: String) -> JSONNumber? {
    guard !text.isEmpty, case .number(let number)? = try? JSONParser.parse(Array(text.utf8)),
      text.utf8.first != 0x20, text.utf8.last != 0x20, !text.contains(where: \.isWhitespace)
    else { return nil }
    return number
  }
}

/// Why a value cannot become an attribute value.
struct CoercionFailure: Error {
  let reason: String
  init(_ reason: String) { self.reason = reason }
}
