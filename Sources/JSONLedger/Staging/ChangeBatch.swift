import Foundation

/// Changes staged in memory, mapped and checked but not written: apply it with
/// `Ledger.apply(_:)`. A value type: copy it, stage more, apply either copy.
///
/// ```swift
/// var batch = ledger.makeBatch()
/// try batch.stage(json, as: "Band")
/// try batch.stageDocument(document)         // {"bands": [...], "albums": [...]}
/// try batch.delete("Album", key: "Tin Drum")
/// let summary = try await ledger.apply(batch, message: "nightly import")
/// ```
public struct ChangeBatch: Sendable {
  let mapper: Mapper
  var steps: [Step] = []
  var ignoredKeys: Set<String> = []
  /// What was wrong with the payloads staged so far (a value of the wrong type, a missing
  /// identity, …), in the order staged, up to `MappingError.limit`. Staging goes on past
  /// them, so that `Ledger.apply` refuses the batch once, listing these with every problem
  /// found while resolving it against the store (a new object without a non-optional
  /// attribute, a deletion its rule denies): one run names every bad object.
  public var problems: [MappingError.Problem] { collected.problems }
  var collected = ProblemCollector()
  /// Strict references for every collection staged (`StagingOptions.isStrict` sets them for
  /// one collection).
  @available(*, deprecated, message: "use StagingOptions(strict: true) for the collections staged")
  public var isStrict: Bool {
    get { strictForAll }
    set { strictForAll = newValue }
  }
  private(set) var strictForAll = false
  /// The other members of the envelopes staged payloads came in (`StagingOptions.itemsAt`),
  /// in the order staged: the record keeps them (`ChangeRecord.Metadata.envelope`).
  public private(set) var envelopes: [JSONObject] = []
  /// How the payloads were fetched, as the fetcher tells it (a pull's pages with their URLs,
  /// statuses, validators and sizes, and how long the run took): the record keeps it
  /// (`ChangeRecord.Metadata.run`). Nil: nothing said.
  public var run: JSONValue?

  /// The envelopes as the record keeps them: one object, or an array of them.
  var envelopeMetadata: JSONValue? {
    switch envelopes.count {
    case 0: nil
    case 1: .object(envelopes[0])
    default: .array(envelopes.map { .object($0) })
    }
  }

  enum Step: Sendable {
    case collection(entity: String, objects: [StagedObject], options: StagingOptions, path: String)
    case deletion(entity: String, identity: [AttributeValue], path: String)
  }

  /// An object of a staged collection: mapped, or (staged from JSON text the store already
  /// holds) skimmed.
  enum StagedObject: Sendable {
    case mapped(MappedObject)
    case skimmed(SkimmedPayload)
  }

  /// What the store holds for identities, in their order: the object id and payload
  /// fingerprint of each (0 and 0: none), as of batch `head`.
  typealias StoredRegistrations = (head: UInt64, registrations: [(id: UInt64, fingerprint: UInt64)])
  /// Reads `StoredRegistrations` for identities (by root entity id); given by the ledger that
  /// made the batch, for staging from JSON text. Nil when the store cannot be read.
  typealias StoredFingerprints =
    @Sendable (_ identities: [(root: UInt32, identity: [AttributeValue])]) -> StoredRegistrations?
  let storedFingerprints: StoredFingerprints?
  /// The `Ledger.batchOrigin` of the ledger that made the batch (0: none).
  let origin: UInt64

  init(mapper: Mapper, origin: UInt64 = 0, storedFingerprints: StoredFingerprints? = nil) {
    self.mapper = mapper
    self.origin = origin
    self.storedFingerprints = storedFingerprints
  }

  /// Whether nothing is staged.
  public var isEmpty: Bool { steps.isEmpty }

  /// The number of top-level objects staged (nested ones not counted).
  public var stagedObjectCount: Int {
    steps.reduce(0) { count, step in
      if case .collection(_, let objects, _, _) = step { return count + objects.count }
      return count + 1
    }
  }

  /// How many objects of the collections staged were skimmed (`StagedObject.skimmed`),
  /// nested ones aside.
  var skimmedObjectCount: Int {
    steps.reduce(0) { count, step in
      guard case .collection(_, let objects, _, _) = step else { return count }
      return count + objects.count { if case .skimmed = $0 { true } else { false } }
    }
  }

  func resolvedEntity(_ name: String) throws(LedgerError) -> ResolvedEntity {
    guard let entity = mapper.model.resolved(name) else {
      throw .unknownEntity(name, known: mapper.model.entities.map(\.name))
    }
    return entity
  }

  /// Stages objects of `entity`: an array of objects (or of keys), or one object.
  ///
  /// An object without an identity is not staged, and a value of the wrong type is left out
  /// of its object; each problem goes to `problems`, and `Ledger.apply` refuses the batch
  /// naming it with every other. Only a wrong call throws here: an unknown entity, a parent
  /// scope that does not fit.
  public mutating func stage(_ json: JSONValue, as entity: String, options: StagingOptions = StagingOptions())
    throws(LedgerError)
  {
    let resolved = try resolvedEntity(entity)
    try stage(json, entity: resolved, path: "", options: options)
  }

  /// Stages objects of `entity` from JSON text (UTF-8 bytes).
  ///
  /// `source` names where the text came from (`stdin`, a URL): a syntax error names it with
  /// the line and column, as `stage(fileAt:)` names the file.
  public mutating func stage(
    json data: some Collection<UInt8>, as entity: String, options: StagingOptions = StagingOptions(),
    source: String? = nil
  ) throws(LedgerError) {
    try stageText(Array(data), entity: entity, options: options, source: source)
  }

  /// Stages a document from JSON text (UTF-8 bytes) whose top-level keys name collections,
  /// as `stageDocument(_:options:)` does with its value; `source` as in `stage(json:as:)`.
  public mutating func stageDocument(
    json data: some Collection<UInt8>, options: StagingOptions = StagingOptions(), source: String? = nil
  ) throws(LedgerError) {
    try stageText(Array(data), entity: nil, options: options, source: source)
  }

  /// Stages the JSON file at `path`, read whole: objects of `entity`, or (nil) a document
  /// whose keys name collections. A file that cannot be read is named with the system's reason
  /// (`cannot read page2.json: No such file or directory`); a syntax error, with the file, line
  /// and column.
  public mutating func stage(fileAt path: String, as entity: String? = nil, options: StagingOptions = StagingOptions())
    throws(LedgerError)
  {
    try SystemError.checkReadableFile(path)
    let data: Data
    do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
      throw .unreadableFile("cannot read \(path): \(SystemError.describe(error))", path: path)
    }
    try stageText(Array(data), entity: entity, options: options, source: path)
  }

  /// Stages a document whose top-level keys name collections (`bands`, `band_members`).
  ///
  /// A key matches an entity's `collectionKey`, else the entity name in the model's key case,
  /// singular or plural, compared without case and `_`. An unknown key is an error that lists
  /// the known ones.
  public mutating func stageDocument(_ json: JSONValue, options: StagingOptions = StagingOptions()) throws(LedgerError)
  {
    try stageDocument(json, options: options, text: nil)
  }

  /// `stageDocument(_:options:)`; `text`: the JSON text `json` was parsed from, if it was
  /// (`Mapper.Report.text`).
  mutating func stageDocument(_ input: JSONValue, options: StagingOptions, text: JSONSkim?) throws(LedgerError) {
    var json = input
    if let itemsAt = options.itemsAt { json = try unwrap(json, at: itemsAt, expectingArray: false) }
    guard case .object(let document) = json else { throw Self.notADocument(json) }
    var staged: [(ResolvedEntity, JSONValue, String)] = []
    for member in document {
      guard let entity = CollectionNames.entity(forKey: member.key, in: mapper.model) else {
        // An array of objects beside members that are no collections: a page in an envelope.
        if options.itemsAt == nil, document.count > 1, let (key, count) = Self.soleArrayOfObjects(in: document),
          CollectionNames.entity(forKey: key, in: mapper.model) == nil
        {
          throw .envelope(arrayAt: key, count: count, entity: nil)
        }
        throw .unknownCollection(member.key, known: CollectionNames.knownKeys(in: mapper.model))
      }
      if entity.isOwned {
        throw .invalidBatch(
          "\(entity.name) is owned by \(entity.owners.joined(separator: ", ")): its objects are staged inside their owner"
        )
      }
      staged.append((entity, member.value, member.key))
    }
    for (entity, value, key) in staged {
      try stage(value, entity: entity, path: key, options: options, text: text)
    }
  }

  /// Why `value`, given as a document (no entity named), is not one: a document is an object
  /// whose keys name collections.
  static func notADocument(_ value: JSONValue) -> LedgerError {
    .invalidBatch("expected a JSON object whose keys name collections, found \(value.kindDescription)")
  }

  /// Stages the deletion of the object of `entity` with `key` (a key the store may not have:
  /// then nothing happens).
  public mutating func delete(_ entity: String, key: JSONValue) throws(LedgerError) {
    let resolved = try resolvedEntity(entity)
    var report = Mapper.Report()
    let identity = mapper.identity(ofKey: key, of: resolved, report: &report)
    do { try report.problems.check() } catch { throw .mapping(error) }
    if let identity { steps.append(.deletion(entity: resolved.name, identity: identity, path: "")) }
  }
  /// Stages the deletion of the object of `entity` whose identity is the Swift value `key`.
  public mutating func delete(_ entity: String, key: some IdentityKey) throws(LedgerError) {
    try delete(entity, key: key.identityJSON)
  }

  mutating func stage(
    _ input: JSONValue, entity: ResolvedEntity, path inputPath: String, firstIndex: Int = 0, options: StagingOptions,
    text: JSONSkim? = nil
  ) throws(LedgerError) {
    if let scope = options.parent { try checkParentScope(scope, of: entity) }
    if entity.isOwned {
      throw .invalidBatch(
        "\(entity.name) is owned by \(entity.owners.joined(separator: ", ")): its objects are staged inside their owner"
      )
    }
    var json = input
    var path = inputPath
    if let itemsAt = options.itemsAt ?? (input.objectValue != nil ? entity.declaration.collectionPath : nil) {
      json = try unwrap(input, at: itemsAt, expectingArray: true)
      path = path.isEmpty ? itemsAt : path + "." + itemsAt
    } else if case .object(let object) = input, mapper.box(of: entity)?.table.readsNone(of: object) == true,
      let (key, count) = Self.soleArrayOfObjects(in: object)
    {
      // An object none of whose keys the entity has, around an array: an envelope.
      throw .envelope(arrayAt: key, count: count, entity: entity.name)
    }
    var report = Mapper.Report()
    report.text = text
    let objects = mapper.mapCollection(
      json, entity: entity, path: JSONPath(path), firstIndex: firstIndex, report: &report)
    collected.add(contentsOf: report.problems)
    ignoredKeys.formUnion(report.ignoredKeys)
    steps.append(.collection(entity: entity.name, objects: objects.map { .mapped($0) }, options: options, path: path))
  }

  /// The items inside the envelope `json` at the dotted `path`; the envelope's other members
  /// are kept for the record. `expectingArray`: the items must be an array (of a staged
  /// entity), not a document.
  mutating func unwrap(_ json: JSONValue, at path: String, expectingArray: Bool) throws(LedgerError) -> JSONValue {
    let segments = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard !path.isEmpty, !segments.contains(where: \.isEmpty) else {
      throw .invalidArgument("\"\(path)\" is not a JSON path to the items (keys joined by dots: results, data.items)")
    }
    guard case .object(let envelope) = json else {
      throw .invalidBatch(
        "the items are to be read at \"\(path)\", but the payload is \(json.kindDescription), not an object around them"
      )
    }
    var value = json
    var reached: [String] = []
    for segment in segments {
      guard case .object(let level) = value else {
        throw .invalidBatch(
          "the items are to be read at \"\(path)\", but \"\(reached.joined(separator: "."))\" is \(value.kindDescription)"
        )
      }
      guard let next = level[segment] else {
        let place = reached.isEmpty ? "the payload" : "\"\(reached.joined(separator: "."))\""
        throw .invalidBatch(
          "the items are to be read at \"\(path)\", but \(place) has no \"\(segment)\" (its keys: "
            + "\(level.keys.prefix(20).joined(separator: ", ")))")
      }
      reached.append(segment)
      value = next
    }
    if expectingArray, value.arrayValue == nil, value.objectValue == nil {
      throw .invalidBatch("the items at \"\(path)\" are \(value.kindDescription), not an array of objects")
    }
    let others = JSONObject(envelope.filter { $0.key != segments[0] })
    if !others.isEmpty { envelopes.append(others) }
    return value
  }

  /// The key and length of the one member of `object` that is an array of objects, when it
  /// has exactly one and its other members are no objects or arrays: the shape of a page in
  /// an envelope.
  static func soleArrayOfObjects(in object: JSONObject) -> (key: String, count: Int)? {
    var found: (String, Int)?
    for member in object {
      switch member.value {
      case .array(let elements):
        guard found == nil, !elements.isEmpty, elements.allSatisfy({ $0.objectValue != nil || $0 == .null }) else {
          return nil
        }
        found = (member.key, elements.count)
      case .object: return nil
      default: continue
      }
    }
    return found
  }

  /// A parent scope names a to-many of the parent's entity whose destination is the staged
  /// entity or an ancestor of it; anything else would link the objects into the wrong list.
  func checkParentScope(_ scope: ParentScope, of entity: ResolvedEntity) throws(LedgerError) {
    let parent = try resolvedEntity(scope.entity)
    guard let relationship = parent.relationshipIndex[scope.relationship] else {
      throw .invalidBatch(
        "\(scope.entity) has no relationship \"\(scope.relationship)\" (it has: "
          + "\(parent.relationships.map(\.name).joined(separator: ", ")))")
    }
    guard relationship.isToMany else {
      throw .invalidBatch("\(scope.entity).\(scope.relationship) is a to-one: a parent scope needs a to-many")
    }
    let destination = relationship.declaration.destination
    guard mapper.model.resolved(destination)?.family.contains(entity.name) == true else {
      throw .invalidBatch(
        "\(scope.entity).\(scope.relationship) holds \(destination) objects, not \(entity.name): "
          + "the staged objects cannot be its children")
    }
  }
}
