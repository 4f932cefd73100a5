extension View {
  /// The objects of `entity` as a JSON array, in the order they were first stored.
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

  /// The whole store as one document keyed by collection (`{"albums": [...], "bands": [...]}`).
  /// A root entity lists its sub-entities' objects in its own list when a subentity key
  /// tells them apart on import; without one, each entity of the family gets a collection of
  /// its own, so that importing the document again gives every object its entity back.
  public func exportDocument(options: ExportOptions = ExportOptions()) throws -> JSONValue {
    var document = JSONObject()
    let model = reader.model
    let keyCase = options.keyCase ?? model.keyCase
    for entity in model.entities {
      guard let resolved = model.resolved(entity.name) else { continue }
      let root = model.resolved(resolved.rootName)
      let listsWithRoot = root?.subentityKey != nil || (root?.family.count ?? 1) == 1
      if listsWithRoot {
        guard entity.parent == nil else { continue }
        document[CollectionNames.key(of: entity, keyCase: keyCase)] = try exportJSON(entity.name, options: options)
      } else if !entity.isAbstract {
        let exporter = Exporter(reader: reader, transformers: reader.transformers, options: options)
        var array: [JSONValue] = []
        try reader.forEachObject(entity.name) { object in
          if object.entity == entity.name { array.append(try exporter.export(object)) }
        }
        document[CollectionNames.key(of: entity, keyCase: keyCase)] = .array(array)
      }
    }
    return .object(document)
  }
}
