public import Foundation

extension ObjectSnapshot {
  /// The attribute `name` as a string, or nil (absent, or of another type).
  ///
  /// ```swift
  /// let title = issue.string("title") ?? ""
  /// let opened = issue.date("createdAt")
  /// ```
  public func string(_ name: String) -> String? {
    if case .string(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as a whole number (`int16`, `int32`, `int64`), or nil.
  public func integer(_ name: String) -> Int64? {
    if case .integer(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as a `Double` (a `double` or `float`, or a whole number), or nil.
  public func double(_ name: String) -> Double? {
    switch attributes[name] {
    case .double(let value)?: value
    case .float(let value)?: Double(value)
    case .integer(let value)?: Double(value)
    default: nil
    }
  }

  /// The attribute `name` as a `Decimal`, or nil.
  public func decimal(_ name: String) -> Decimal? {
    if case .decimal(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as a `Bool`, or nil.
  public func bool(_ name: String) -> Bool? {
    if case .bool(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as a `Date`, or nil.
  public func date(_ name: String) -> Date? {
    if case .date(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as a `UUID`, or nil.
  public func uuid(_ name: String) -> UUID? {
    if case .uuid(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as a `URL`, or nil.
  public func url(_ name: String) -> URL? {
    if case .url(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as `Data` (a `binary` attribute), or nil.
  public func data(_ name: String) -> Data? {
    if case .binary(let value)? = attributes[name] { value } else { nil }
  }

  /// The attribute `name` as JSON (a `json` attribute), or nil.
  public func json(_ name: String) -> JSONValue? {
    if case .json(let value)? = attributes[name] { value } else { nil }
  }
}
