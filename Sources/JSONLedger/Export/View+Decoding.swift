import Foundation
import JSONLedgerSupport

extension View {
  /// Decodes the objects of `entity` (and its sub-entities) into your `Decodable` type, in
  /// the order they were first stored. Properties match the model's attribute and relationship names (not JSON keys);
  /// relationships decode as keys (`band: String`) or, with `.nested(depth:)`, as nested
  /// values (`band: BandValue`).
  ///
  /// ```swift
  /// struct Album: Decodable { var name: String; var released: Date?; var band: String? }
  /// let albums = try ledger.read { view in try view.decode([Album].self, from: "Album") }
  /// ```
  public func decode<T: Decodable>(_ type: [T].Type, from entity: String, relationships: RelationshipExport = .ids)
    throws -> [T]
  {
    let exporter = Exporter(
      reader: reader, transformers: reader.transformers, options: Self.codableOptions(relationships))
    var values: [JSONValue] = []
    try reader.forEachObject(entity) { values.append(try exporter.export($0)) }
    return try Self.decode([T].self, from: .array(values), entity: entity)
  }

  /// Decodes the objects a query matches into your `Decodable` type, in its order (one page
  /// when it has a limit), as `decode(_:from:relationships:)` decodes an entity's.
  ///
  /// ```swift
  /// struct Issue: Decodable { var title: String; var votes: Int? }
  /// let top = try ledger.read { view in
  ///   try view.decode([Issue].self, from: Query("Issue").sorted(by: .descending("votes")).limited(to: 10))
  /// }
  /// ```
  public func decode<T: Decodable>(_ type: [T].Type, from query: Query, relationships: RelationshipExport = .ids)
    throws -> [T]
  {
    let exporter = Exporter(
      reader: reader, transformers: reader.transformers, options: Self.codableOptions(relationships))
    let values = try objects(query).objects.map { try exporter.export($0) }
    return try Self.decode([T].self, from: .array(values), entity: query.entity)
  }

  /// Decodes the object of `entity` whose identity is the Swift value `key`, or nil.
  public func decode<T: Decodable>(
    _ type: T.Type, from entity: String, key: some IdentityKey, relationships: RelationshipExport = .ids
  ) throws -> T? {
    try decode(type, from: entity, key: key.identityJSON, relationships: relationships)
  }

  public func decode<T: Decodable>(
    _ type: T.Type, from entity: String, key: JSONValue, relationships: RelationshipExport = .ids
  ) throws -> T? {
    guard let object = try reader.object(entity, key: key) else { return nil }
    let exporter = Exporter(
      reader: reader, transformers: reader.transformers, options: Self.codableOptions(relationships))
    return try Self.decode(T.self, from: try exporter.export(object), entity: entity)
  }

  static func codableOptions(_ relationships: RelationshipExport) -> ExportOptions {
    var options = ExportOptions(relationships: relationships, keyCase: .camelCase, dateFormat: .iso8601)
    options.usesModelNames = true
    return options
  }

  static func decode<T: Decodable>(_ type: T.Type, from json: JSONValue, entity: String) throws -> T {
    // Straight from the exported value, with no JSON text in between.
    let decoder = JSONValueDecoder { DateCoding.date(from: .string($0)) }
    do {
      return try decoder.decode(T.self, from: json)
    } catch let error as DecodingError {
      throw LedgerError(.decodingFailed, "cannot decode \(entity) as \(T.self): \(CodableDescription.describe(error))")
        .with { $0.entity = entity }
    }
  }
}

extension ObjectSnapshot {
  /// Decodes this object into your `Decodable` type on its own, with no view open:
  /// properties match the model's attribute and relationship names, dates decode from their
  /// ISO 8601 text, and relationships as the related objects' keys (`band: String`,
  /// `labels: [String]`; a composite key as an array). Value transformers are not applied;
  /// `View.decode` applies them.
  ///
  /// ```swift
  /// struct Album: Decodable { var name: String; var released: Date?; var band: String? }
  /// let album = try snapshot.decode(Album.self)
  /// ```
  public func decode<T: Decodable>(_ type: T.Type) throws -> T {
    var object = JSONObject()
    for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
      object[name] = value.jsonValue(dateFormat: .iso8601)
    }
    func keyJSON(_ key: ObjectKey) -> JSONValue {
      let parts = key.identity.map { $0.jsonValue(dateFormat: .iso8601) }
      return parts.count == 1 ? parts[0] : .array(parts)
    }
    for (name, keys) in relationships.sorted(by: { $0.key < $1.key }) {
      let isToOne = declaration?.relationshipIndex[name]?.isToMany == false
      object[name] = isToOne ? keys.first.map(keyJSON) ?? .null : .array(keys.map(keyJSON))
    }
    return try View.decode(T.self, from: .object(object), entity: entity)
  }
}
