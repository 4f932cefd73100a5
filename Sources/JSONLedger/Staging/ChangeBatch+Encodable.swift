import Foundation

extension ChangeBatch {
  /// Stages your `Encodable` values as objects of `entity` — JSONCache's `JSONifiable` done
  /// with Codable. Property names are matched to the model's names (the same rules as JSON
  /// keys); dates are written as ISO 8601.
  ///
  /// ```swift
  /// try batch.stage([Band(name: "Japan", formed: 1974)], as: "Band")
  /// ```
  public mutating func stage<T: Encodable>(_ values: [T], as entity: String, options: StagingOptions = StagingOptions())
    throws
  {
    try stage(try Self.json(values), as: entity, options: options)
  }

  /// Stages one `Encodable` value as an object of `entity`.
  public mutating func stage<T: Encodable>(_ value: T, as entity: String, options: StagingOptions = StagingOptions())
    throws
  {
    try stage(try Self.json(value), as: entity, options: options)
  }

  static func json<T: Encodable>(_ value: T) throws -> JSONValue {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      try container.encode(DateCoding.string(from: date, format: .iso8601))
    }
    encoder.dataEncodingStrategy = .base64
    return try JSONParser.parse(try encoder.encode(value))
  }
}
