import Foundation
import LMDB

extension Ledger {
  /// Opens the store at `path`, creating it (with `model`) when the directory is missing or
  /// empty. When `model` is given for an existing store it must equal the stored model, or,
  /// with `migration: .automatic`, the store is migrated to it first
  /// (`migrate(at:to:options:allowingRemovals:)`; removals of live objects are refused).
  ///
  /// A directory holding other files, or a file that is not a store, is refused without
  /// writing anything. With `options.readOnly` nothing is ever written: a missing store is
  /// not created, and a model that differs is not migrated to.
  public static func open(
    at path: String, model: Model? = nil, options: Options = Options(), migration: Migration = .none
  ) throws -> Ledger {
    let state = try StoreDirectory.inspect(path)
    switch state {
    case .missing, .empty:
      try refuseInterruptedUpgrade(path, state)
      guard let model, !options.readOnly else { throw LedgerError.storeNotFound(path: path) }
      do { return try create(at: path, model: model, options: options, state: state) } catch LedgerError.Code
        .storeExists
      {
        // Another process created it meanwhile: open that store (its model must be this one).
        return try openExisting(at: path, model: model, options: options, migration: migration)
      }
    case .store:
      return try openExisting(at: path, model: model, options: options, migration: migration)
    }
  }

  /// Creates a new store at `path`; fails if one exists.
  public static func create(at path: String, model: Model, options: Options = Options()) throws -> Ledger {
    try create(at: path, versions: ModelVersions(first: model), options: options)
  }

  /// Creates a new store whose model has had these versions (a restored archive's).
  static func create(at path: String, versions: ModelVersions, options: Options) throws -> Ledger {
    let state = try StoreDirectory.inspect(path)
    try refuseInterruptedUpgrade(path, state)
    if case .store = state {
      if case .foreign(let names) = try StoreLayout.contents(of: try openEnvironment(path, options)) {
        throw foreignEnvironment(path, names)
      }
      throw LedgerError.storeExists(path: path)
    }
    return try create(at: path, versions: versions, options: options, state: state)
  }

  private static func create(at path: String, model: Model, options: Options, state: StoreDirectory.State) throws
    -> Ledger
  {
    try create(at: path, versions: ModelVersions(first: model), options: options, state: state)
  }

  private static func create(
    at path: String, versions: ModelVersions, options: Options, state: StoreDirectory.State
  ) throws -> Ledger {
    do { try options.transformers.validate(versions.model) } catch { throw LedgerError.model(error) }
    if case .missing = state { try makeDirectory(path) }
    let environment = try openEnvironment(path, options)
    return try firstCommit(at: path, versions: versions, environment: environment, options: options)
  }

  /// A missing store whose upgrade was cut short is not created anew: the data is beside it.
  private static func refuseInterruptedUpgrade(_ path: String, _ state: StoreDirectory.State) throws {
    guard case .missing = state else { return }
    let normalized = BuildDirectory.normalized(path)
    if let interrupted = try? interruptedUpgrade(at: normalized) {
      throw LedgerError.upgradeInterrupted(path: normalized, keptPath: interrupted.keptPath)
    }
  }

  /// The error for an LMDB file that another program's databases fill (`open`, `create` and
  /// `upgrade` refuse it alike).
  static func foreignEnvironment(_ path: String, _ names: [String]) -> LedgerError {
    .notAStore(
      path: path,
      reason: "its LMDB file belongs to another program (databases: \(names.prefix(5).joined(separator: ", ")))")
  }

  private static func cutShort(_ path: String) -> LedgerError {
    .notAStore(
      path: path,
      reason: "its creation was cut short before anything was committed; open it with its model to finish creating it")
  }

  /// Creates the store directory and any missing parent (owner-only), or says which one
  /// cannot be made and why.
  static func makeDirectory(_ path: String) throws {
    var missing: [String] = []
    var current = path
    while access(current, F_OK) != 0 {
      missing.append(current)
      guard let parent = parentDirectory(of: current) else { break }
      current = parent
    }
    for directory in missing.reversed() where mkdir(directory, 0o700) != 0 && errno != EEXIST {
      let reason = String(cString: strerror(errno))
      let parent = parentDirectory(of: directory) ?? "."
      throw LedgerError.fileSystem(
        "cannot create the store directory \(directory): \(reason) (in \(parent))", path: directory)
    }
  }

  /// The directory holding `path`, or nil for a single relative component or the root.
  private static func parentDirectory(of path: String) -> String? {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return nil }
    if slash == trimmed.startIndex { return trimmed.count > 1 ? "/" : nil }
    return String(trimmed[..<slash])
  }

  /// The first commit of a new store: every database, the format and the model, in one write
  /// transaction, so that a store either has all of them or nothing. A store another process
  /// made in the meantime is not overwritten: LMDB runs one writer at a time, and this one
  /// finds the format already there.
  private static func firstCommit(at path: String, model: Model, environment: Environment, options: Options) throws
    -> Ledger
  {
    try firstCommit(at: path, versions: ModelVersions(first: model), environment: environment, options: options)
  }

  private static func firstCommit(
    at path: String, versions: ModelVersions, environment: Environment, options: Options
  ) throws -> Ledger {
    do { try options.transformers.validate(versions.model) } catch { throw LedgerError.model(error) }
    let layout = try writeTransaction(environment, reserving: 0) { txn in
      let layout = try StoreLayout(creatingIn: txn)
      if try txn.value(forKey: MetaKey.format, in: layout.meta) != nil { throw LedgerError.storeExists(path: path) }
      try txn.put([UInt8](bigEndian: UInt32(StoreFormat.version)), forKey: MetaKey.format, in: layout.meta)
      try versions.write(into: txn, in: layout.meta)
      return layout
    }
    return Ledger(path: path, versions: versions, environment: environment, layout: layout, options: options)
  }

  private static func openExisting(
    at path: String, model expected: Model?, options: Options, migration: Migration = .none
  ) throws -> Ledger {
    let environment = try openEnvironment(path, options)
    switch try StoreLayout.contents(of: environment) {
    case .nothing:
      guard let expected, !options.readOnly else { throw cutShort(path) }
      return try firstCommit(at: path, model: expected, environment: environment, options: options)
    case .foreign(let names):
      throw foreignEnvironment(path, names)
    case .version3:
      throw LedgerError.unsupportedFormat(path: path, found: 3, supported: formatVersion)
    case .store:
      break
    }
    // The format before any other database is opened: opening one a store of an older format
    // lacks would create it, and the libraries of that format would take the store for
    // another program's.
    let meta = try environment.database(named: "meta")
    let (format, modelBytes) = try environment.read { txn in
      (try txn.value(forKey: MetaKey.format, in: meta), try txn.value(forKey: MetaKey.model, in: meta))
    }
    if format == nil, modelBytes == nil {
      // A store whose databases an earlier version made one commit at a time, cut short
      // before its metadata: nothing was stored, so it is finished like one that has nothing.
      let layout = try StoreLayout(environment: environment)
      if try environment.read({ txn in
        try ([layout.log, layout.meta] + layout.projections).allSatisfy { try txn.statistics(of: $0).entries == 0 }
      }) {
        guard let expected, !options.readOnly else { throw cutShort(path) }
        return try firstCommit(at: path, model: expected, environment: environment, options: options)
      }
    }
    guard let format, format.count == 4, modelBytes != nil else {
      throw LedgerError.notAStore(path: path, reason: "its LMDB file holds no JSONLedger metadata")
    }
    let version = Int(UInt32(bigEndianBytes: format))
    guard StoreFormat.isCurrent(version) else {
      throw LedgerError.unsupportedFormat(path: path, found: version, supported: formatVersion)
    }
    let layout = try StoreLayout(environment: environment)
    let versions: ModelVersions
    do { versions = try environment.read { txn in try ModelVersions.load(from: txn, in: layout.meta) } } catch let
      failure as StoredModelFailure
    {
      throw LedgerError.notAStore(path: path, reason: "its stored model does not load: \(failure.reason)")
    }
    let model = versions.model
    if let expected, expected != model {
      if migration == .automatic, !options.readOnly {
        let stored = Ledger(path: path, versions: versions, environment: environment, layout: layout, options: options)
        defer { stored.close() }
        _ = try stored.migrate(to: expected)
        return try openExisting(at: path, model: expected, options: options)
      }
      // Say what differs, so that the user can tell an edit from a wrong file.
      throw LedgerError.modelDiffers(path: path, differences: model.differences(to: expected))
    }
    do { try options.transformers.validate(model) } catch { throw LedgerError.model(error) }
    return Ledger(path: path, versions: versions, environment: environment, layout: layout, options: options)
  }

  private static func openEnvironment(_ path: String, _ options: Options) throws -> Environment {
    var environmentOptions = Environment.Options()
    environmentOptions.filePermissions = options.filePermissions
    environmentOptions.mapSize = options.initialMapSize
    environmentOptions.durability = options.durability
    environmentOptions.readOnly = options.readOnly
    let environment: Environment
    do { environment = try Environment.shared(path: path, options: environmentOptions) } catch {
      if error.isInvalidEnvironment {
        throw LedgerError.notAStore(path: path, reason: "data.mdb is not an LMDB file of this version")
      }
      if error.code == EACCES {
        let needs =
          options.readOnly
          ? "data.mdb must be readable, and lock.mdb writable: every LMDB reader takes a slot there, "
            + "except on a read-only file system"
          : "data.mdb and lock.mdb must be writable"
        throw LedgerError.fileSystem("cannot open the store \(path): permission denied (\(needs))", path: path)
      }
      if error.isOpenTheOtherWay {
        let how = options.readOnly ? "for writing" : "read-only"
        throw LedgerError.invalidArgument(
          "this process has the store \(path) open \(how): use that Ledger (one process opens a store one way)"
        ).with { $0.path = path }
      }
      if error.code == EROFS {
        throw LedgerError.fileSystem(
          "cannot open the store \(path) for writing: it is on a read-only file system (open it read-only to read it)",
          path: path)
      }
      throw LedgerError.storage(error.description)
    }
    // Before anything reads a tree: LMDB would crash on a damaged page rather than say so.
    if options.checksPagesOnOpen {
      do { _ = try environment.checkPages() } catch let failure as PageCheckFailure {
        throw LedgerError.damagedFile(path: path, reason: failure.description)
      }
    }
    return environment
  }
}
