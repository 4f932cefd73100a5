import Foundation
import LMDB

/// What `Ledger.upgrade(at:)` did.
public struct UpgradeReport: Sendable, Equatable {
  /// The format the store had.
  public var fromFormat: Int
  /// The format it has now.
  public var toFormat: Int
  /// Records replayed (format 3), or read to build the `reverts` projection (formats 4 and 5).
  public var batches: Int
  /// Where the store of the old format was kept (nil when there was nothing to upgrade, or
  /// when it was upgraded in place).
  public var previousStorePath: String?
}

extension Ledger {
  /// Turns a store of an older format into the current one.
  ///
  /// - Formats 4 and 5 have the current records and projections but one: the `reverts`
  ///   projection is built from the log and the format set, in place, in one write
  ///   transaction. The log is not touched: ids, records and checksums stay (a replica keeps
  ///   following its remote). An interrupted upgrade leaves the store as it was.
  /// - Format 3 is replayed: every record, with its batch id, time, kind, metadata and
  ///   changes, is written again in the current format into a new store beside it, which then
  ///   takes the store's place. The old store is kept as `<path>.format<N>` until you remove
  ///   it. Object ids are internal and renumbered (ids now carry their entity); keys, batch
  ///   ids and everything a record says in the user's terms stay.
  ///
  /// A store already in the current format is left alone. Nothing may have the store open
  /// meanwhile: a process of an older library would go on writing without `reverts`.
  public static func upgrade(at path: String, options: Options = Options()) throws -> UpgradeReport {
    try LedgerError.wrappingStorageErrors { try upgradeNow(at: path, options: options) }
  }

  private static func upgradeNow(at path: String, options: Options) throws -> UpgradeReport {
    let path = BuildDirectory.normalized(path)
    let build = BuildDirectory(for: path, suffix: "upgrading")
    let state = try StoreDirectory.inspect(path)
    if case .missing = state {
      // A crash between the two renames: the new store is whole, the old one kept.
      guard let interrupted = try interruptedUpgrade(at: path) else { throw LedgerError.storeNotFound(path: path) }
      try build.install(at: path)
      return UpgradeReport(
        fromFormat: interrupted.format, toFormat: Int(formatVersion), batches: 0,
        previousStorePath: interrupted.keptPath)
    }
    guard case .store = state else { throw LedgerError.storeNotFound(path: path) }
    let (version, model, records) = try upgradeSource(path)
    guard !StoreFormat.isCurrent(version) else {
      return UpgradeReport(fromFormat: version, toFormat: version, batches: 0, previousStorePath: nil)
    }
    if StoreFormat.upgradedInPlace.contains(version) {
      let (from, batches) = try addRevertsProjection(at: path)
      return UpgradeReport(fromFormat: from, toFormat: Int(formatVersion), batches: batches, previousStorePath: nil)
    }
    let kept = path + ".format\(version)"
    guard !FileManager.default.fileExists(atPath: kept) else {
      throw LedgerError.destinationExists(
        "\(kept) exists: move it away to keep the store of format \(version) there", path: kept)
    }
    // A build an earlier run cut short is started again; a directory of that name that
    // this library did not make is refused.
    try build.make()
    var replayed = 0
    do {
      var newOptions = options
      newOptions.durability = .noSync
      let target = try Ledger.create(at: build.storePath, model: model, options: newOptions)
      defer { target.close() }
      var ids = ObjectIDRenumbering(model: model)
      var replay = RecordReplay(into: target)
      try records { record in
        try replay.append(try ids.renumbered(record))
        replayed += 1
      }
      try replay.flush()
      try target.environment.sync()
      try build.mark(.complete)
    } catch {
      try? build.remove()
      throw error
    }
    guard rename(path, kept) == 0 else {
      let reason = SystemError.reason(errno)
      try? build.remove()
      throw LedgerError.fileSystem("cannot move \(path) to \(kept): \(reason)", path: path)
    }
    BuildDirectory.syncDirectory(BuildDirectory.parent(of: path))
    do { try build.install(at: path) } catch {
      // The old store goes back to its place; the new one stays for a re-run to finish.
      if rename(kept, path) == 0 { try? build.remove() }
      throw error
    }
    return UpgradeReport(
      fromFormat: version, toFormat: Int(formatVersion), batches: replayed, previousStorePath: kept)
  }

  /// Completes a store of format 4 or 5 in one write transaction: creates `reverts`, enters
  /// every revert of the log in it, and sets the current format. The format is read again in
  /// the transaction, so two upgrades at once do the work once. Returns the format found and
  /// the records read.
  private static func addRevertsProjection(at path: String) throws -> (format: Int, batches: Int) {
    let environment: Environment
    do { environment = try Environment.shared(path: path) } catch {
      throw LedgerError.notAStore(path: path, reason: "data.mdb does not open: \(SystemError.describe(error))")
    }
    return try Ledger.writeTransaction(environment, reserving: 0) { txn in
      let meta = try txn.openDatabase(named: "meta", create: false)
      let log = try txn.openDatabase(named: "log", create: false)
      let version = try txn.value(forKey: MetaKey.format, in: meta).map { Int(UInt32(bigEndianBytes: $0)) }
      guard let version, StoreFormat.upgradedInPlace.contains(version) else { return (version ?? 0, 0) }
      let reverts = try txn.openDatabase(named: "reverts", create: true)
      var batches = 0
      try txn.forEach(in: log, prefix: []) { entry in
        let batchID = UInt64(bigEndianBytes: entry.key)
        let record: ChangeRecord
        do { record = try RecordCoding.decode(entry.value) } catch {
          throw LedgerError.corruptRecord(batchID: batchID, reason: "\(error)")
        }
        if record.kind == .revert, let reverted = record.metadata.revertedBatchID {
          try txn.put([], forKey: StoreKeys.revert(of: reverted, by: batchID), in: reverts)
        }
        batches += 1
        return true
      }
      try txn.put([UInt8](bigEndian: UInt32(StoreFormat.version)), forKey: MetaKey.format, in: meta)
      return (version, batches)
    }
  }

  /// An upgrade of the store at `path` (which is missing) that was cut short between its two
  /// renames: its new store is complete and the old one kept as `<path>.formatN`.
  static func interruptedUpgrade(at path: String) throws -> (format: Int, keptPath: String)? {
    let build = BuildDirectory(for: path, suffix: "upgrading")
    guard try build.state() == .complete else { return nil }
    for format in Int(StoreFormat.oldestUpgradable)..<formatVersion {
      let kept = path + ".format\(format)"
      if FileManager.default.fileExists(atPath: kept) { return (format, kept) }
    }
    return nil
  }

  /// The format, the model and a reader of every record of the store at `path`, which must
  /// be of the current format or one `upgrade` reads.
  private static func upgradeSource(_ path: String) throws -> (
    Int, Model, (_ each: (ChangeRecord) throws -> Void) throws -> Void
  ) {
    let environment: Environment
    do { environment = try Environment.shared(path: path) } catch {
      throw LedgerError.notAStore(path: path, reason: "data.mdb does not open: \(SystemError.describe(error))")
    }
    // Before any database is opened (which would create it): another program's file is
    // refused without a byte written.
    switch try StoreLayout.contents(of: environment) {
    case .nothing: throw LedgerError.notAStore(path: path, reason: "its LMDB file holds no JSONLedger metadata")
    case .foreign(let names): throw foreignEnvironment(path, names)
    case .store, .version3: break
    }
    let meta: Database
    let log: Database
    do {
      meta = try environment.database(named: "meta")
      log = try environment.database(named: "log")
    } catch {
      throw LedgerError.notAStore(path: path, reason: "it has no JSONLedger log")
    }
    let (format, modelBytes) = try environment.read { txn in
      (try txn.value(forKey: MetaKey.format, in: meta), try txn.value(forKey: MetaKey.model, in: meta))
    }
    guard let format, format.count == 4, let modelBytes else {
      throw LedgerError.notAStore(path: path, reason: "its LMDB file holds no JSONLedger metadata")
    }
    let version = Int(UInt32(bigEndianBytes: format))
    guard StoreFormat.isCurrent(version) || version >= Int(StoreFormat.oldestUpgradable) && version < Int(formatVersion)
    else { throw LedgerError.unsupportedFormat(path: path, found: version, supported: formatVersion) }
    let model: Model
    do { model = try Model(json: try JSONParser.parse(modelBytes), numbering: nil, isStored: true) } catch {
      throw LedgerError.notAStore(path: path, reason: "its stored model does not load: \(SystemError.describe(error))")
    }
    return (
      version, model,
      { each in
        try environment.read { txn in
          // Format 3 kept one model: every record was written under it.
          let versions = ModelVersions(first: model)
          var expected: UInt64 = 1
          try txn.forEach(in: log, prefix: []) { entry in
            let batchID = UInt64(bigEndianBytes: entry.key)
            guard entry.key.count == 8, batchID == expected else {
              throw LedgerError.corruptRecord(batchID: expected, reason: "the log skips to batch \(batchID)")
            }
            try each(try decodeRecord(entry.value, batchID: batchID, versions: versions))
            expected += 1
            return true
          }
        }
      }
    )
  }
}

/// Old object ids → ids of the current format (`ObjectIDs`), handed out in the order of the
/// old ids, which is the order objects were first stored: ids of one entity keep their
/// order, so sorted link lists stay sorted.
struct ObjectIDRenumbering {
  let model: Model
  private var ids: [UInt64: UInt64] = [:]
  private var nextSequence: UInt64 = 1

  init(model: Model) { self.model = model }

  mutating func renumbered(_ record: ChangeRecord) throws -> ChangeRecord {
    var record = record
    for change in record.changes.sorted(by: { $0.objectID < $1.objectID }) where ids[change.objectID] == nil {
      guard let entity = model.resolved(change.entity) else {
        throw LedgerError.corruptRecord(
          batchID: record.batchID, reason: "it changes an object of \(change.entity), which the model lacks")
      }
      ids[change.objectID] = ObjectIDs.make(root: entity.rootID, sequence: nextSequence)
      nextSequence += 1
    }
    func map(_ id: UInt64) throws -> UInt64 {
      guard let mapped = ids[id] else {
        throw LedgerError.corruptRecord(batchID: record.batchID, reason: "it links object \(id), which no record made")
      }
      return mapped
    }
    for index in record.changes.indices {
      record.changes[index].objectID = try map(record.changes[index].objectID)
      for linkIndex in record.changes[index].links.indices {
        var link = record.changes[index].links[linkIndex]
        link.added = try link.added.map(map)
        link.removed = try link.removed.map(map)
        if let order = link.order {
          link.order = LinkChange.Order(old: try order.old.map(map), new: try order.new.map(map))
        } else {
          link.added.sort()
          link.removed.sort()
        }
        record.changes[index].links[linkIndex] = link
      }
    }
    return record
  }
}
