import Foundation
import LMDB

extension Ledger {
  /// Opens the store at `path`, creating it (with `model`) when the directory is missing or
  /// empty. When `model` is given for an existing store it must equal the stored model.
  ///
  /// A directory holding other files, or a file that is not a store, is refused without
  /// writing anything.
  public static func open(at path: String, model: Model? = nil, options: Options = Options()) throws -> Ledger {
    let state = try StoreDirectory.inspect(path)
    switch state {
    case .missing, .empty:
      guard let model else { throw LedgerError.storeNotFound(path: path) }
      return try create(at: path, model: model, options: options, state: state)
    case .store:
      return try openExisting(at: path, model: model, options: options)
    }
  }

  /// Creates a new store at `path`; fails if one exists.
  public static func create(at path: String, model: Model, options: Options = Options()) throws -> Ledger {
    let state = try StoreDirectory.inspect(path)
    if case .store = state { throw LedgerError.storeExists(path: path) }
    return try create(at: path, model: model, options: options, state: state)
  }

  private static func create(at path: String, model: Model, options: Options, state: StoreDirectory.State) throws
    -> Ledger
  {
    do { try options.transformers.validate(model) } catch { throw LedgerError.model(error) }
    if case .missing = state {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    let environment = try openEnvironment(path, options)
    let layout = try StoreLayout(environment: environment)
    try writeMetadata(model: model, environment: environment, layout: layout)
    return Ledger(
      path: path, model: model, environment: environment, layout: layout, transformers: options.transformers)
  }

  /// The format version and the model: the first commit of a new store.
  private static func writeMetadata(model: Model, environment: Environment, layout: StoreLayout) throws {
    try environment.write { txn in
      try txn.put([UInt8](bigEndian: UInt32(formatVersion)), forKey: MetaKey.format, in: layout.meta)
      // Declaration order matters: entity and relationship ids are positions in the model.
      try txn.put(JSONWriter(options: []).bytes(from: model.jsonValue), forKey: MetaKey.model, in: layout.meta)
    }
  }

  /// Whether a store holds nothing at all: its creation was cut short (a crash, a kill)
  /// after LMDB made its file but before the first commit wrote the metadata.
  private static func isUnfinished(_ environment: Environment, _ layout: StoreLayout) throws -> Bool {
    try environment.read { txn in
      try ([layout.log, layout.meta] + layout.projections).allSatisfy { try txn.statistics(of: $0).entries == 0 }
    }
  }

  private static func openExisting(at path: String, model expected: Model?, options: Options) throws -> Ledger {
    let environment = try openEnvironment(path, options)
    let layout = try StoreLayout(environment: environment)
    let (format, modelBytes) = try environment.read { txn in
      (try txn.value(forKey: MetaKey.format, in: layout.meta), try txn.value(forKey: MetaKey.model, in: layout.meta))
    }
    if format == nil, modelBytes == nil, try isUnfinished(environment, layout) {
      guard let expected else {
        throw LedgerError.notAStore(
          path: path,
          reason:
            "its creation was cut short before anything was committed; open it with its model to finish creating it")
      }
      do { try options.transformers.validate(expected) } catch { throw LedgerError.model(error) }
      try writeMetadata(model: expected, environment: environment, layout: layout)
      return Ledger(
        path: path, model: expected, environment: environment, layout: layout, transformers: options.transformers)
    }
    guard let format, format.count == 4, let modelBytes else {
      throw LedgerError.notAStore(path: path, reason: "its LMDB file holds no JSONLedger metadata")
    }
    let version = Int(UInt32(bigEndianBytes: format))
    guard version == formatVersion else {
      throw LedgerError.unsupportedFormat(path: path, found: version, supported: formatVersion)
    }
    let model: Model
    do { model = try Model(json: try JSONParser.parse(modelBytes)) } catch {
      throw LedgerError.notAStore(path: path, reason: "its stored model does not load: \(error)")
    }
    if let expected, expected != model {
      throw LedgerError.model(
        ModelError(
          source: path,
          problems: [.init(place: "", reason: "the given model differs from the model the store was created with")]))
    }
    do { try options.transformers.validate(model) } catch { throw LedgerError.model(error) }
    return Ledger(
      path: path, model: model, environment: environment, layout: layout, transformers: options.transformers)
  }

  private static func openEnvironment(_ path: String, _ options: Options) throws -> Environment {
    var environmentOptions = Environment.Options()
    environmentOptions.filePermissions = options.filePermissions
    environmentOptions.mapSize = options.initialMapSize
    environmentOptions.durability = options.durability
    do { return try Environment(path: path, options: environmentOptions) } catch {
      if error.isInvalidEnvironment {
        throw LedgerError.notAStore(path: path, reason: "data.mdb is not an LMDB file of this version")
      }
      throw LedgerError.storage(error.description)
    }
  }
}
