public import Foundation

/// A typed attribute value as stored: what a JSON value becomes after coercion to its
/// attribute's type. A cleared attribute has no value (it is absent, exported as `null`).
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
  case string(String)
  /// Any of `int16`, `int32`, `int64`.
  case integer(Int64)
  case double(Double)
  case float(Float)
  case decimal(Decimal)
  case bool(Bool)
  /// A point in time, kept to the microsecond.
  case date(Date)
  case uuid(UUID)
  case url(URL)
  case binary(Data)
  /// An array, object or any JSON value of a `json` attribute.
  case json(JSONValue)

  public var description: String {
    switch self {
    case .string(let value): "\"\(value)\""
    case .integer(let value): String(value)
    case .double(let value): String(value)
    case .float(let value): String(value)
    case .decimal(let value): "\(value)"
    case .bool(let value): String(value)
    case .date(let value): DateCoding.string(from: value, format: .iso8601)
    case .uuid(let value): value.uuidString
    case .url(let value): value.absoluteString
    case .binary(let value): "<\(value.count) bytes>"
    case .json(let value): JSONWriter().string(from: value)
    }
  }

  /// The value as the plain text a user types for a key on the command line (`Japan`, `42`).
  public var keyText: String {
    if case .string(let value) = self { return value }
    return description
  }
}
