public import Foundation

/// A JSON document as a value: what the mapper reads and the exporter writes.
///
/// Objects keep their members in document order; numbers keep their literal text, so a
/// decimal such as `12.20` reaches a `decimal` attribute exactly.
///
/// ```swift
/// let band: JSONValue = ["name": "Japan", "formed": 1974, "albums": ["Tin Drum"]]
/// band["name"]?.stringValue  // "Japan"
/// ```
public enum JSONValue: Sendable, Hashable {
  case null
  case bool(Bool)
  case number(JSONNumber)
  case string(String)
  case array([JSONValue])
  case object(JSONObject)

  /// The member named `key` when this is an object (the last one if the key repeats).
  public subscript(key: String) -> JSONValue? {
    if case .object(let object) = self { return object[key] }
    return nil
  }

  /// The string, when this is a string.
  public var stringValue: String? {
    if case .string(let string) = self { return string }
    return nil
  }

  /// The object, when this is an object.
  public var objectValue: JSONObject? {
    if case .object(let object) = self { return object }
    return nil
  }

  /// The elements, when this is an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let array) = self { return array }
    return nil
  }

  /// Whether this is `null`.
  public var isNull: Bool { self == .null }

  /// A short name of the value's kind for error messages: "a string", "an array", ….
  public var kindDescription: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// A JSON number, kept as the literal text it was written with.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
  /// The number as written in JSON (`12`, `-0.5`, `1e3`).
  public let literal: String

  /// Wraps a literal the parser has already checked.
  package init(validLiteral literal: String) { self.literal = literal }

  /// A number from an integer.
  public init(_ value: Int64) { literal = String(value) }
  /// A number from an integer.
  public init(_ value: Int) { literal = String(value) }
  /// A number from an unsigned integer: every value, batch ids past `Int64.max` too.
  public init(_ value: UInt64) { literal = String(value) }
  /// A number from a double; a non-finite value becomes 0 (JSON cannot hold it).
  public init(_ value: Double) {
    guard value.isFinite else {
      literal = "0"
      return
    }
    if value == value.rounded(.towardZero), abs(value) < 1e15 {
      literal = String(Int64(value))
    } else {
      literal = "\(value)"
    }
  }
  /// A number from a decimal, exactly.
  public init(_ value: Decimal) { literal = "\(value)" }

  public var description: String { literal }

  /// Whether the literal has no fraction and no exponent.
  public var isInteger: Bool { !literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) }
  /// The value as a 64-bit integer when it is one exactly (`3`, `3.0`, `3e2`); else nil.
  public var int64Value: Int64? {
    if let exact = Int64(literal) { return exact }
    return Self.exactInteger(literal)
  }

  /// A literal with a fraction or an exponent (`1.5e3`, `20.0`) as the whole number it is
  /// exactly, or nil (a fraction left over, or beyond Int64): read digit by digit, never
  /// through a double, which would round `9007199254740993.0`.
  private static func exactInteger(_ literal: String) -> Int64? {
    var text = Substring(literal)
    let negative = text.first == "-"
    if negative { text = text.dropFirst() }
    var exponent = 0
    if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      guard let value = Int(text[text.index(after: e)...]), abs(value) < 64 else { return nil }
      exponent = value
      text = text[..<e]
    }
    var digits = String(text.filter { $0 != "." })
    if let dot = text.firstIndex(of: ".") { exponent -= text.distance(from: text.index(after: dot), to: text.endIndex) }
    while exponent < 0 {
      guard digits.last == "0" else { return nil }
      digits.removeLast()
      exponent += 1
    }
    digits += String(repeating: "0", count: exponent)
    let trimmed = digits.drop { $0 == "0" }
    guard trimmed.count <= 19, trimmed.allSatisfy(\.isASCII), let magnitude = UInt64(trimmed.isEmpty ? "0" : trimmed)
    else { return nil }
    if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
    return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
  }
  /// The value as a double.
  public var doubleValue: Double { Double(literal) ?? .nan }
  /// The value as an exact decimal.
  public var decimalValue: Decimal? { Decimal(string: literal, locale: Locale(identifier: "en_US_POSIX")) }
}

/// A JSON object: members in document order.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
  /// One `"key": value` pair.
  public struct Member: Sendable, Hashable {
    /// The member's key.
    public var key: String
    /// The member's value.
    public var value: JSONValue
    /// A member with this key and value.
    public init(key: String, value: JSONValue) {
      self.key = key
      self.value = value
    }
  }

  /// The members in document order.
  public private(set) var members: [Member] {
    didSet { packedSourceRange = 0 }
  }
  /// `sourceRange`, its start in the high half and its end in the low one (0: none): packed,
  /// so that an object stays as small as every other `JSONValue`.
  private var packedSourceRange: UInt64 = 0

  /// Where the object's text is in the bytes `JSONParser` read it from (braces included),
  /// while it is unchanged since; nil for an object built or changed in code, or beyond the
  /// first 4 GiB of its text. Not part of its value: two objects with equal members are
  /// equal wherever they came from.
  package var sourceRange: Range<Int>? {
    guard packedSourceRange != 0 else { return nil }
    return Int(packedSourceRange >> 32)..<Int(packedSourceRange & 0xFFFF_FFFF)
  }

  /// An object with these members.
  public init(_ members: [Member] = []) { self.members = members }

  /// An object read from the bytes at `sourceRange`.
  package init(_ members: [Member], sourceRange: Range<Int>) {
    self.members = members
    if sourceRange.upperBound <= Int(UInt32.max) {
      packedSourceRange = UInt64(sourceRange.lowerBound) << 32 | UInt64(sourceRange.upperBound)
    }
  }

  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.members == rhs.members }

  public func hash(into hasher: inout Hasher) { hasher.combine(members) }

  /// An empty object with room for `count` members.
  package init(minimumCapacity count: Int) {
    members = []
    members.reserveCapacity(count)
  }

  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    members = elements.map { Member(key: $0.0, value: $0.1) }
  }

  /// The value of the last member named `key`; setting replaces it or appends a member.
  public subscript(key: String) -> JSONValue? {
    get { members.last(where: { $0.key == key })?.value }
    set {
      if let index = members.lastIndex(where: { $0.key == key }) {
        if let newValue { members[index].value = newValue } else { members.remove(at: index) }
      } else if let newValue {
        members.append(Member(key: key, value: newValue))
      }
    }
  }

  /// The keys in document order.
  public var keys: [String] { members.map(\.key) }
  /// The number of members.
  public var count: Int { members.count }
  /// Whether it has no member.
  public var isEmpty: Bool { members.isEmpty }

  public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

  /// The same members ordered by key (byte order of their UTF-8), for deterministic output.
  public func sortedByKey() -> JSONObject {
    JSONObject(members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
  }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  public init(nilLiteral: ()) { self = .null }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
  public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
  public init(stringLiteral value: String) { self = .string(value) }
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(JSONObject(elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
  }
}
