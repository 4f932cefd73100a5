import Foundation
public import Logging

extension ReplicaCore {
  /// Builds a new replica at `path` from the remote's log, then verifies it: from the newest
  /// snapshot and the batches after it, or from batch 1 when there is none or `fromSnapshot`
  /// is false. With `reset`, a store already at `path` is replaced once the new one is whole;
  /// without, it is refused. With `backup` (a backup of a store of this ledger), the new
  /// replica starts from a copy of it and applies only the batches after its head, once its
  /// head record's digest is found to be the remote's.
  ///
  /// The store is built at `PATH.cloning`. A store it replaces is moved to `PATH.replaced`,
  /// and removed once the new one is at `PATH`, as is one a reset left there when it was
  /// interrupted between the two moves.
  public static func clone(
    from log: Log, into path: String, reset: Bool, fromBackup backup: String?, fromSnapshot: Bool,
    options: Ledger.Options, logger: Logger
  ) async throws -> ReplicaCore {
    let target = URL(fileURLWithPath: path).standardizedFileURL.path
    let exists = FileManager.default.fileExists(atPath: target)
    if exists, !reset, !((try? FileManager.default.contentsOfDirectory(atPath: target))?.isEmpty ?? false) {
      throw RemoteError.unsupported("\(path) exists: clone into a new folder, or replace it with reset")
    }
    // A reset replaces a store, never anything else that happens to be at the path; and the
    // folders a clone builds in are cleared only when they hold what a clone left there.
    if exists, reset, !Ledger.holdsAStoreOrNothing(target) {
      throw RemoteError.unsupported("\(path) is not a store: a reset replaces a store only, so nothing was touched")
    }
    let building = target + ".cloning"
    for leftover in [building, target + ".replaced"] where !Ledger.holdsAStoreOrNothing(leftover) {
      throw RemoteError.unsupported(
        "\(leftover) exists and is not a store a clone left: move it away, then clone again")
    }
    try? FileManager.default.removeItem(atPath: building)
    // Built without a flush per commit, then flushed once: the store takes its place only
    // whole, so a crash meanwhile leaves nothing to trust.
    var buildOptions = options
    buildOptions.durability = .noSync
    do {
      let built = try await log.withSession { session in
        try await build(
          at: building, from: log, on: session, fromBackup: backup, fromSnapshot: fromSnapshot,
          options: buildOptions, logger: logger)
      }
      defer { built.close() }
      _ = try await built.verify()
      try await blocking { try built.flushToDisk() }
    } catch {
      try? FileManager.default.removeItem(atPath: building)
      throw error
    }
    // The new store takes the place of the old one only once it is whole.
    let opened = try await blocking {
      let old = target + ".replaced"
      if exists {
        try? FileManager.default.removeItem(atPath: old)
        try FileManager.default.moveItem(atPath: target, toPath: old)
      }
      try FileManager.default.moveItem(atPath: building, toPath: target)
      // Gone once the new store is in place: the store it replaced, or one a reset left when
      // it was interrupted between its two moves.
      try? FileManager.default.removeItem(atPath: old)
      return try Ledger.open(at: target, options: options)
    }
    return ReplicaCore(ledger: opened, log: log, logger: logger)
  }

  /// The store at `building`, caught up to the remote's head: the `Ledger` it reads through
  /// at the end (a migration reopens it).
  private static func build(
    at building: String, from log: Log, on session: Log.Session, fromBackup backup: String?, fromSnapshot: Bool,
    options: Ledger.Options, logger: Logger
  ) async throws -> Ledger {
    try await session.checkFormat()
    let head = try await session.head()
    guard head.firstBatch == 1 else {
      throw RemoteError.unsupported(
        "the remote ledger \"\(log.ledgerName)\" starts at batch \(head.firstBatch): a clone needs a log from batch 1")
    }
    let definition = try modelDefinition(head.model, batch: 0)
    let ledger: Ledger
    if let backup {
      ledger = try await blocking {
        try FileManager.default.copyItem(atPath: backup, toPath: building)
        return try Ledger.open(at: building, options: options)
      }
      // The backup's versions must be the remote's first ones: the same models, numbered the
      // same; the migrations after its head follow with the tail.
      guard try ledger.hasFirstModelVersions(of: definition) else {
        ledger.close()
        throw RemoteError.unsupported(
          "the backup \(backup) has another model than the remote ledger \"\(log.ledgerName)\": it is not a backup of this ledger"
        )
      }
    } else if fromSnapshot, let snapshot = try await session.newestSnapshot(atOrBefore: head.batchID) {
      // From the newest snapshot, under the version it was written under; the tail follows.
      guard try await session.digest(ofBatch: snapshot.batchID) == snapshot.logDigest else {
        throw RemoteError.corruptRecord(
          batch: snapshot.batchID, reason: "the snapshot stands for another record than the log's")
      }
      ledger = try await blocking {
        let ledger = try Ledger.create(
          at: building, modelDefinition: definition, version: snapshot.modelVersion, options: options)
        _ = try ledger.startReplica(atCheckpoint: snapshot.bytes, digest: snapshot.logDigest)
        return ledger
      }
    } else {
      // At the first version: the migration records bring it to the others as they come.
      ledger = try await blocking {
        try Ledger.create(at: building, modelDefinition: definition, version: 1, options: options)
      }
    }
    let remembered = log.remembered
    do {
      try await blocking { try ledger.setReplicaSource(remembered) }
      let replica = ReplicaCore(ledger: ledger, log: log, logger: logger)
      _ = try await replica.catchUp(on: session, to: head)
      let built = replica.ledger
      if built !== ledger { ledger.close() }
      return built
    } catch {
      ledger.close()
      throw error
    }
  }
}
