import LMDB

/// Every version of a store's model, as `meta` keeps them: `model` (the current version's
/// JSON), `modelVersion` (absent: 1), `numbering` (absent: by position), and for each earlier
/// version N, `model.N` holding `{"model": …, "numbering": …}`.
///
/// A record names the version it was written under; reading one written under an earlier
/// version tells it in the current version's terms, one version at a time.
struct ModelVersions: Sendable {
  /// The version new batches are written under.
  var current: UInt32 { UInt32(models.count) }
  /// The current version's model.
  var model: Model { models[models.count - 1] }
  /// Version N's model at N - 1; never empty.
  private let models: [Model]
  /// Version N to N + 1 at N - 1.
  private let translations: [RecordTranslation]

  /// A store's first version.
  init(first model: Model) { self.init(models: [model]) }

  private init(models given: [Model]) {
    // Each version keeps the JSON keys of the names its renames came from, down the versions.
    var models = given
    for index in models.indices.dropFirst() { models[index] = models[index].keepingNames(after: models[index - 1]) }
    self.models = models
    translations = zip(models, models.dropFirst()).map { RecordTranslation(from: $0, to: $1) }
  }

  /// Whether some migration changed an entity's identity: telling older records then reads
  /// objects' identities from the projections.
  var changesIdentities: Bool { translations.contains { !$0.reidentified.isEmpty } }

  /// These versions and then `next` (numbered after the current one).
  func appending(_ next: Model) -> ModelVersions { ModelVersions(models: models + [next]) }

  /// Versions 1 through `version` of these, or nil when there are fewer.
  func through(_ version: UInt32) -> ModelVersions? {
    guard version >= 1, version <= current else { return nil }
    return ModelVersions(models: Array(models.prefix(Int(version))))
  }

  /// The first of `other`'s versions that is not the same version of these (another model,
  /// or numbered otherwise), or nil when `other`'s versions are these versions' first ones.
  /// Compared as sorted JSON: a model read back from JSON lists its entities and attributes
  /// in name order, one made from a file in the file's, and that order changes nothing stored.
  func firstVersion(differingFrom other: ModelVersions) -> UInt32? {
    let writer = JSONWriter(options: [.sortedKeys])
    func text(_ model: Model) -> [UInt8] {
      writer.bytes(from: .object(["model": model.jsonValue, "numbering": model.numbering.jsonValue]))
    }
    for (index, (mine, theirs)) in zip(models, other.models).enumerated() where text(mine) != text(theirs) {
      return UInt32(index + 1)
    }
    return other.current <= current ? nil : current + 1
  }

  /// `record` in the current version's terms (its `modelVersion` still names the version it
  /// was written under); `identities` tells the identity of an object whose entity's identity
  /// changed since (`RecordTranslation.IdentityLookup`).
  func translate(_ record: consuming ChangeRecord, identities: RecordTranslation.IdentityLookup? = nil) throws
    -> ChangeRecord
  {
    guard record.modelVersion != current else { return record }
    guard record.modelVersion >= 1, record.modelVersion < current else {
      throw TranslationFailure(
        place: "batch \(record.batchID)",
        reason: record.modelVersion > current
          ? "it was written under model version \(record.modelVersion), newer than the \(current) this ledger opened the store at: the store was migrated since; open it again"
          : "it names model version 0, which no store has")
    }
    for index in Int(record.modelVersion - 1)..<translations.count {
      record = try translations[index].translate(consume record, identities: identities)
    }
    return record
  }

  /// The versions `meta` holds; a store made before versions were kept has one.
  static func load(from txn: Transaction, in meta: Database) throws -> ModelVersions {
    guard let modelBytes = try txn.value(forKey: MetaKey.model, in: meta) else {
      throw StoredModelFailure(reason: "there is no model")
    }
    var current: UInt32 = 1
    if let bytes = try txn.value(forKey: MetaKey.modelVersion, in: meta) {
      guard bytes.count == 4, UInt32(bigEndianBytes: bytes) >= 1 else {
        throw StoredModelFailure(reason: "its model version is not a number")
      }
      current = UInt32(bigEndianBytes: bytes)
    }
    var models: [Model] = []
    for version in 1..<current {
      guard let bytes = try txn.value(forKey: MetaKey.model(version: version), in: meta),
        case .object(let entry) = try parse(bytes, "model version \(version)"), let json = entry["model"]
      else { throw StoredModelFailure(reason: "model version \(version) is missing") }
      models.append(try load(json, numbering: entry["numbering"], "model version \(version)"))
    }
    let numbering = try txn.value(forKey: MetaKey.numbering, in: meta).map { try parse($0, "its numbering") }
    models.append(try load(try parse(modelBytes, "its model"), numbering: numbering, "its model"))
    return ModelVersions(models: models)
  }

  /// Writes the current version as the store's model, and the earlier ones under their
  /// numbers.
  func write(into txn: Transaction, in meta: Database) throws {
    let writer = JSONWriter(options: [])
    for (index, previous) in models.dropLast().enumerated() {
      let entry: JSONValue = .object(["model": previous.jsonValue, "numbering": previous.numbering.jsonValue])
      try txn.put(writer.bytes(from: entry), forKey: MetaKey.model(version: UInt32(index + 1)), in: meta)
    }
    try txn.put(writer.bytes(from: model.jsonValue), forKey: MetaKey.model, in: meta)
    try txn.put(writer.bytes(from: model.numbering.jsonValue), forKey: MetaKey.numbering, in: meta)
    try txn.put([UInt8](bigEndian: current), forKey: MetaKey.modelVersion, in: meta)
  }

  /// Every version, for an archive: `{"versions": [{"model": …, "numbering": …}, …]}`.
  var jsonValue: JSONValue {
    .object([
      "versions": .array(models.map { .object(["model": $0.jsonValue, "numbering": $0.numbering.jsonValue]) })
    ])
  }

  /// The versions `jsonValue` wrote, or a single model's JSON as its first version.
  init(json: JSONValue) throws {
    guard case .object(let root) = json, case .array(let entries)? = root["versions"] else {
      self.init(first: try Self.load(json, numbering: nil, "the model"))
      return
    }
    var models: [Model] = []
    for (index, entry) in entries.enumerated() {
      guard case .object(let members) = entry, let model = members["model"] else {
        throw StoredModelFailure(reason: "model version \(index + 1) is missing")
      }
      models.append(try Self.load(model, numbering: members["numbering"], "model version \(index + 1)"))
    }
    guard !models.isEmpty else { throw StoredModelFailure(reason: "there is no model") }
    self.init(models: models)
  }

  private static func parse(_ bytes: [UInt8], _ what: String) throws -> JSONValue {
    do { return try JSONParser.parse(bytes) } catch {
      throw StoredModelFailure(reason: "\(what) is not JSON: \(error)")
    }
  }

  private static func load(_ json: JSONValue, numbering: JSONValue?, _ what: String) throws -> Model {
    var stored: ModelNumbering?
    if let numbering {
      guard let read = ModelNumbering(json: numbering) else {
        throw StoredModelFailure(reason: "the numbering of \(what) does not load")
      }
      stored = read
    }
    do { return try Model(json: json, numbering: stored, isStored: true) } catch {
      throw StoredModelFailure(reason: "\(what) does not load: \(error)")
    }
  }
}

/// Why the models a store keeps do not load.
struct StoredModelFailure: Error, CustomStringConvertible {
  let reason: String
  var description: String { reason }
}
