extension View {
  /// The objects of `entity` as a JSON array, in key order.
  ///
  /// ```swift
  /// let json = try ledger.read { view in try view.exportJSON("Album", options: .init(relationships: .ids)) }
  /// ```
  public func exportJSON(_ entity: String, options: ExportOptions = ExportOptions()) throws -> JSONValue {
    let exporter = Exporter(reader: reader, transformers: reader.transformers, options: options)
    var array: [JSONValue] = []
    try reader.forEachObject(entity) { array.append(try exporter.export($0)) }
    return .array(array)
  }

  /// One object as JSON (for a PUT of a changed object).
  public func exportJSON(_ object: ObjectSnapshot, options: ExportOptions = ExportOptions()) throws -> JSONValue {
    try Exporter(reader: reader, transformers: reader.transformers, options: options).export(object)
  }

  /// The whole store as one document keyed by collection (`{"albums": [...], "bands": [...]}`),
  /// each entity that has no parent listed once (sub-entities inside their root's list).
  public func exportDocument(options: ExportOptions = ExportOptions()) throws -> JSONValue {
    var document = JSONObject()
    for entity in reader.model.entities where entity.parent == nil {
      let key = CollectionNames.key(of: entity, keyCase: options.keyCase ?? reader.model.keyCase)
      document[key] = try exportJSON(entity.name, options: options)
    }
    return .object(document)
  }
}
