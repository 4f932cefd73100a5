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

  /// Objects as JSON, each as `exportJSON(_:options:)` writes it alone: a page of a query,
  /// with what to write for each entity worked out once for the whole page.
  public func exportJSON(_ objects: [ObjectSnapshot], options: ExportOptions = ExportOptions()) throws -> [JSONValue] {
    let exporter = Exporter(reader: reader, transformers: reader.transformers, options: options)
    return try objects.map { try exporter.export($0) }
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
    let options = options.deciding(placeholdersFor: entity)
    let exporter = Exporter(reader: reader, transformers: reader.transformers, options: options)
    let placeholders = options.includesPlaceholders == true
    if let entity {
      try reader.forEachObject(entity) { object in
        if placeholders || !object.isPlaceholder { try body(.object(try exporter.export(object))) }
      }
      return
    }
    for collection in exportCollections(options: options) {
      try body(.collection(collection.key))
      try reader.forEachObject(collection.entity) { object in
        guard placeholders || !object.isPlaceholder, !exporter.isWrittenInline(object) else { return }
        if !collection.isExact || object.entity == collection.entity { try body(.object(try exporter.export(object))) }
      }
    }
  }

  /// The export of `entity` (its objects in stored order, as an array) or, with nil, of the
  /// whole store (the document `exportDocument(options:)` builds), as JSON text in `writer`'s
  /// layout, handed to `write` in pieces of about `chunkSize` bytes as it is read.
  ///
  /// Each object's text is written straight from its stored bytes: no snapshot and no
  /// `JSONValue` is built (but for nested relationships), and only the current piece is held,
  /// never the document. The text is what `writer` writes for `exportJSON` or
  /// `exportDocument`, byte for byte.
  ///
  /// ```swift
  /// let file = try FileHandle(forWritingTo: URL(fileURLWithPath: "albums.json"))
  /// try ledger.read { view in
  ///   try view.writeJSON("Album") { piece in try file.write(contentsOf: piece) }
  /// }
  /// ```
  public func writeJSON(
    _ entity: String?, options: ExportOptions = ExportOptions(), writer: JSONWriter = JSONWriter(),
    chunkSize: Int = 64 << 10, to write: ([UInt8]) throws -> Void
  ) throws {
    let options = options.deciding(placeholdersFor: entity)
    let exporter = Exporter(reader: reader, transformers: reader.transformers, options: options, writer: writer)
    var output = JSONOutput(writer: writer)
    // Room for a piece and the object that ends it; a huge `chunkSize` reserves no more.
    output.reserveCapacity(min(max(chunkSize, 0), 1 << 24) + 4096)
    var parts = StateParts()
    // The output and the parts are passed in, not captured: the closure below reaches them
    // through parameters, whose exclusive access the compiler proves, where captured
    // variables were checked at run time for each object (RESULTS.md).
    func objects(of entity: String, exactly: Bool, _ output: inout JSONOutput, _ parts: inout StateParts) throws {
      output.beginArray()
      try reader.forEachObjectInPlace(entity) { object in
        guard !exactly || object.entity == entity else { return }
        try exporter.write(object, into: &output, parts: &parts)
        if output.bytes.count >= chunkSize {
          try write(output.bytes)
          output.removeAll()
        }
      }
      output.endArray()
    }
    if let entity {
      try objects(of: entity, exactly: false, &output, &parts)
    } else {
      var collections = exportCollections(options: options)
      if writer.options.contains(.sortedKeys) {
        collections.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
      }
      output.beginObject()
      for collection in collections {
        output.key(collection.key)
        try objects(of: collection.entity, exactly: collection.isExact, &output, &parts)
      }
      output.endObject()
    }
    if !output.bytes.isEmpty { try write(output.bytes) }
  }

  /// The collections of a whole-store export, in model order, each with the entity whose
  /// objects it lists: a root entity lists its sub-entities' objects too when a subentity key
  /// tells them apart on import (`isExact` false); without one, each entity of the family has
  /// a collection of its own. A key two entities share is the later one's, in the earlier
  /// one's place (as a document's member is set).
  private func exportCollections(options: ExportOptions) -> [(key: String, entity: String, isExact: Bool)] {
    let model = reader.model
    let keyCase = options.keyCase ?? model.keyCase
    var collections: [(key: String, entity: String, isExact: Bool)] = []
    for entity in model.entities {
      // Owned rows are written inside their owners.
      guard let resolved = model.resolved(entity.name), !resolved.isOwned else { continue }
      let root = model.resolved(resolved.rootName)
      let listsWithRoot = root?.subentityKey != nil || (root?.family.count ?? 1) == 1
      let collection: (key: String, entity: String, isExact: Bool)
      if listsWithRoot {
        guard entity.parent == nil else { continue }
        collection = (CollectionNames.key(of: entity, keyCase: keyCase), entity.name, false)
      } else if !entity.isAbstract {
        collection = (CollectionNames.key(of: entity, keyCase: keyCase), entity.name, true)
      } else {
        continue
      }
      if let index = collections.firstIndex(where: { $0.key == collection.key }) {
        collections[index] = collection
      } else {
        collections.append(collection)
      }
    }
    return collections
  }
}
