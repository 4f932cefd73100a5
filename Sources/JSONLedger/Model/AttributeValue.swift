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

  /// Equal when stored alike: text compares by its UTF-8 bytes, not by Unicode canonical
  /// equivalence as `String ==` does, so that `"e\u{301}"` and `"\u{E9}"` are two values (a
  /// backend that changes one to the other has changed the value). JSON values compare as
  /// written. The one equality of values in the library: the resolver, the projector and
  /// queries all use it.
  public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
    switch (lhs, rhs) {
    case (.string(let left), .string(let right)): sameBytes(left, right)
    case (.integer(let left), .integer(let right)): left == right
    case (.double(let left), .double(let right)): left == right
    case (.float(let left), .float(let right)): left == right
    case (.decimal(let left), .decimal(let right)): left == right
    case (.bool(let left), .bool(let right)): left == right
    case (.date(let left), .date(let right)): left == right
    case (.uuid(let left), .uuid(let right)): left == right
    case (.url(let left), .url(let right)): sameBytes(left.absoluteString, right.absoluteString)
    case (.binary(let left), .binary(let right)): left == right
    case (.json(let left), .json(let right)): JSONWriter().bytes(from: left) == JSONWriter().bytes(from: right)
    default: false
    }
  }

  /// Whether two strings hold the same UTF-8 bytes (`==` on strings is Unicode canonical
  /// equivalence instead). The lengths first, then one comparison of the two buffers where
  /// the strings are contiguous, as native and small strings are.
  static func sameBytes(_ left: String, _ right: String) -> Bool {
    let (leftBytes, rightBytes) = (left.utf8, right.utf8)
    guard leftBytes.count == rightBytes.count else { return false }
    let contiguous = leftBytes.withContiguousStorageIfAvailable { leftBuffer in
      rightBytes.withContiguousStorageIfAvailable { rightBuffer in
        // One `memcmp`: a generic element-by-element walk costs tens of instructions a byte.
        // (No base address: both are empty, the counts being equal.)
        guard let left = leftBuffer.baseAddress, let right = rightBuffer.baseAddress else { return true }
        return memcmp(left, right, leftBuffer.count) == 0
      }
    }
    return (contiguous ?? nil) ?? leftBytes.elementsEqual(rightBytes)
  }

  /// Feeds a string's UTF-8 bytes to `hasher` in one call (copied first where the string is
  /// not contiguous): equal bytes hash equally, as `sameBytes` needs.
  private func combineBytes(of text: String, into hasher: inout Hasher) {
    let bytes = text.utf8
    hasher.combine(bytes.count)
    let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
      hasher.combine(bytes: UnsafeRawBufferPointer(buffer))
    }
    if done == nil { Array(bytes).withUnsafeBytes { hasher.combine(bytes: $0) } }
  }

  public func hash(into hasher: inout Hasher) {
    switch self {
    case .string(let value):
      hasher.combine(0)
      combineBytes(of: value, into: &hasher)
    case .integer(let value):
      hasher.combine(1)
      hasher.combine(value)
    case .double(let value):
      hasher.combine(2)
      hasher.combine(value)
    case .float(let value):
      hasher.combine(3)
      hasher.combine(value)
    case .decimal(let value):
      hasher.combine(4)
      hasher.combine(value)
    case .bool(let value):
      hasher.combine(5)
      hasher.combine(value)
    case .date(let value):
      hasher.combine(6)
      hasher.combine(value)
    case .uuid(let value):
      hasher.combine(7)
      hasher.combine(value)
    case .url(let value):
      hasher.combine(8)
      combineBytes(of: value.absoluteString, into: &hasher)
    case .binary(let value):
      hasher.combine(9)
      hasher.combine(value)
    case .json(let value):
      hasher.combine(10)
      hasher.combine(JSONWriter().bytes(from: value))
    }
  }

  /// The value as the plain text a user types for a key on the command line (`Japan`, `42`).
  public var keyText: String {
    if case .string(let value) = self { return value }
    return description
  }
}
