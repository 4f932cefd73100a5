extension View {
  /// The objects of `entity` as a JSON array, in the order they were first stored.
  ///
  /// ```swift
  /// let json = try ledger.read { view in try view.exportJSON("Album", options: .init(relationships: .ids)) }
  /// ```
  public func exportJSON(_ entity: String, options: ExportOptions = ExportOptions()) throws -> JSONValue {
    var array: [JSONValue] = []
    try export(entity, options: options) { piece in
      if case .object(let object) = piece { array.append(object) }
    }
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
    var collection: String?
    var array: [JSONValue] = []
    func finishCollection() {
      if let collection { document[collection] = .array(array) }
      array = []
    }
    try export(nil, options: options) { piece in
      switch piece {
      case .collection(let key):
        finishCollection()
        collection = key
      case .object(let object):
        array.append(object)
      }
    }
    finishCollection()
    return .object(document)
  }

  /// One piece of an export as it is read: a collection starts (in a whole-store export), or
  /// an object of the current collection.
  public enum ExportPiece: Sendable {
    case collection(String)
    case object(JSONValue)
  }

  /// The export of `entity` (its objects, in stored order) or, with nil, of the whole store
  /// (each collection, then its objects), one piece at a time: what a streamed export writes
  /// as it reads, holding one object, never the document (`exportJSON`, `exportDocument`).
  public func export(_ entity: String?, options: ExportOptions = ExportOptions(), _ body: (ExportPiece) throws -> Void)
    throws
  {
    let exporter = Exporter(reader: reader, transformers: reader.transformers, options: options)
    if let entity {
      try reader.forEachObject(entity) { try body(.object(try exporter.export($0))) }
      return
    }
    let model = reader.model
    let keyCase = options.keyCase ?? model.keyCase
    for entity in model.entities {
      guard let resolved = model.resolved(entity.name) else { continue }
      let root = model.resolved(resolved.rootName)
      let listsWithRoot = root?.subentityKey != nil || (root?.family.count ?? 1) == 1
      if listsWithRoot {
        guard entity.parent == nil else { continue }
        try body(.collection(CollectionNames.key(of: entity, keyCase: keyCase)))
        try reader.forEachObject(entity.name) { try body(.object(try exporter.export($0))) }
      } else if !entity.isAbstract {
        try body(.collection(CollectionNames.key(of: entity, keyCase: keyCase)))
        try reader.forEachObject(entity.name) { object in
          if object.entity == entity.name { try body(.object(try exporter.export(object))) }
        }
      }
    }
  }
}
