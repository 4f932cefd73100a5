import JSONLedgerSupport
import LMDB

// Each kind of ledger error, with its message in one place: a throw site names the kind and
// its facts, never the words.

extension LedgerError {
  /// The path has no store (and creating one was not asked for).
  public static func storeNotFound(path: String) -> LedgerError {
    LedgerError(.storeNotFound, "no store at \(path) (open it with a model to create one)").with { $0.path = path }
  }

  /// The directory exists but is not a JSONLedger store; nothing was written to it.
  public static func notAStore(path: String, reason: String) -> LedgerError {
    LedgerError(.notAStore, "\(path) is not a JSONLedger store: \(reason)").with { $0.path = path }
  }

  /// The store was written by a library with another store format: newer, older than any
  /// this library upgrades, or older and upgradable (``Code/upgradeNeeded``).
  public static func unsupportedFormat(path: String, found: Int, supported: Int) -> LedgerError {
    let error: LedgerError
    if found > supported {
      error = LedgerError(
        .unsupportedFormat,
        "the store at \(path) has format version \(found), newer than this library supports (\(supported)); use a newer JSONLedger"
      )
    } else if found >= Int(StoreFormat.oldestUpgradable) {
      error = LedgerError(
        .upgradeNeeded,
        "the store at \(path) has format version \(found), written by an earlier JSONLedger; this library reads format \(supported): upgrade it (`Ledger.upgrade(at:)`) to format \(supported)"
      )
    } else {
      error = LedgerError(
        .unsupportedFormat,
        "the store at \(path) has format version \(found), older than any this library upgrades (\(StoreFormat.oldestUpgradable)); it reads format \(supported) only: export the data with the earlier version and import it into a new store"
      )
    }
    return error.with {
      $0.path = path
      $0.formatVersion = found
    }
  }

  /// A store already exists where a new one was asked for.
  public static func storeExists(path: String) -> LedgerError {
    LedgerError(.storeExists, "a store already exists at \(path)").with { $0.path = path }
  }

  /// The model is invalid, or does not fit the store.
  public static func model(_ error: ModelError) -> LedgerError {
    LedgerError(.invalidModel, error.description).with { $0.model = error }
  }

  /// The store was opened with a model that differs from its own.
  public static func modelDiffers(path: String, differences: [ModelDifference]) -> LedgerError {
    let count = "\(differences.count) difference\(differences.count == 1 ? "" : "s")"
    let message =
      "the given model differs from the model of the store at \(path) (\(count)); migrate the store (`Ledger.migrate(at:to:)`, or open it with `migration: .automatic`):\n"
      + listed(differences)
    return LedgerError(.modelDiffers, message).with {
      $0.path = path
      $0.differences = differences
    }
  }

  /// The payload cannot be mapped (every bad object is listed).
  public static func mapping(_ error: MappingError) -> LedgerError {
    LedgerError(.invalidPayload, error.description).with {
      $0.mapping = error
      $0.entity = error.problems.first?.entity
    }
  }

  /// Malformed JSON (line and column), in `source` when one is named (a file, `stdin`, a URL).
  public static func syntax(_ error: JSONSyntaxError, source: String?) -> LedgerError {
    LedgerError(.invalidJSON, source.map { "\($0): \(error)" } ?? error.description).with {
      $0.syntax = error
      $0.path = source
    }
  }

  /// An entity name the model does not have.
  public static func unknownEntity(_ name: String, known: [String]) -> LedgerError {
    let message =
      if let match = closestName(to: name, among: known) {
        match.lowercased() == name.lowercased()
          ? "unknown entity \"\(name)\": did you mean \(match)? (entity names are case-sensitive)"
          : "unknown entity \"\(name)\": did you mean \(match)? (the model has: \(known.joined(separator: ", ")))"
      } else {
        "unknown entity \"\(name)\" (the model has: \(known.joined(separator: ", ")))"
      }
    return LedgerError(.unknownEntity, message).with {
      $0.entity = name
      $0.known = known
    }
  }

  /// A top-level collection key that names no entity.
  public static func unknownCollection(_ key: String, known: [String]) -> LedgerError {
    LedgerError(.unknownCollection, "unknown collection \"\(key)\" (known: \(known.joined(separator: ", ")))").with {
      $0.key = key
      $0.known = known
    }
  }

  /// A payload that is an envelope around its items (`{"count": …, "next": …, "results": […]}`)
  /// staged without saying where the items are (`StagingOptions.itemsAt`). `known` holds the
  /// path of the one array of objects it has.
  public static func envelope(arrayAt key: String, count: Int, entity: String?) -> LedgerError {
    let what = entity.map { "objects of \($0)" } ?? "collections keyed by name"
    return LedgerError(
      .envelope,
      "expected \(what), found an envelope: the payload is an object with an array of \(count) "
        + "object\(count == 1 ? "" : "s") under \"\(key)\"; read the items there"
    ).with {
      $0.entity = entity
      $0.known = [key]
    }
  }

  /// No object of `entity` has `key` (in the state after batch `asOf`, when given): the key
  /// as the caller gave it, its text as it is.
  public static func objectNotFound(entity: String, key: String, asOf: UInt64? = nil) -> LedgerError {
    LedgerError(.objectNotFound, "no \(entity) with key \(key)\(asOf.map { " as of batch \($0)" } ?? "")").with {
      $0.entity = entity
      $0.key = key
      $0.batchID = asOf
    }
  }

  /// No object of `entity` has `key`, written in the message as JSON (`"Wire"`, `["Wire",
  /// 1977]`), so that an empty or padded key shows as what it is. ``key`` holds a text key as
  /// it is, any other as its JSON.
  public static func objectNotFound(entity: String, key: JSONValue, asOf: UInt64? = nil) -> LedgerError {
    var error = objectNotFound(entity: entity, key: JSONWriter(options: []).string(from: key), asOf: asOf)
    if case .string(let text) = key { error.key = text }
    return error
  }

  /// A batch id outside the log, which holds batches `first` to `head` (0 to 0 when empty).
  public static func batchNotFound(_ id: UInt64, first: UInt64, head: UInt64) -> LedgerError {
    let message =
      head == 0
      ? "batch \(id) does not exist: the log is empty"
      : "batch \(id) does not exist (the log holds batches \(first) to \(head))"
    return LedgerError(.batchNotFound, message).with {
      $0.batchID = id
      $0.firstBatch = first
      $0.head = head
    }
  }

  /// A batch before the log's first batch: compact moved it to an archive.
  public static func batchArchived(_ id: UInt64, firstBatch: UInt64) -> LedgerError {
    LedgerError(
      .batchArchived,
      "batch \(id) was archived by compact: the log starts at batch \(firstBatch) (a checkpoint of the state then); restore the archive into a new store (`Ledger.restoreLog(from:to:)`) to read it"
    ).with {
      $0.batchID = id
      $0.firstBatch = firstBatch
    }
  }

  /// `batchArchived(_:firstBatch:)`, by its earlier name.
  @available(*, deprecated, renamed: "batchArchived(_:firstBatch:)")
  public static func batchArchived(_ id: UInt64, horizon: UInt64) -> LedgerError {
    batchArchived(id, firstBatch: horizon)
  }

  /// A stored record failed its checksum or does not decode.
  public static func corruptRecord(batchID: UInt64, reason: String) -> LedgerError {
    LedgerError(.corruptRecord, "the record of batch \(batchID) is corrupt: \(reason)").with { $0.batchID = batchID }
  }

  /// A stored object state, key entry or history does not decode.
  static func corruptState(_ reason: String) -> LedgerError {
    LedgerError(.corruptState, "the store's state is corrupt: \(reason)")
  }

  /// The projections disagree with a replay of the log.
  public static func verificationFailed(_ reason: String) -> LedgerError {
    LedgerError(.verificationFailed, "verification failed: \(reason)")
  }

  /// The store's data file does not hold together: a damaged page.
  public static func damagedFile(path: String, reason: String) -> LedgerError {
    LedgerError(.damagedFile, "the data file of the store at \(path) is damaged (\(reason)); restore it from a backup")
      .with { $0.path = path }
  }

  /// The head moved past the batch id the caller expected (optimistic concurrency).
  public static func headMoved(expected: UInt64, actual: UInt64) -> LedgerError {
    LedgerError(
      .headMoved,
      "the log head moved: expected batch \(expected), found \(actual) (another writer applied a batch first)"
    ).with {
      $0.expectedHead = expected
      $0.head = actual
    }
  }

  /// The storage engine failed.
  public static func storage(_ reason: String) -> LedgerError {
    LedgerError(.storage, "storage error: \(reason)")
  }

  /// `body`, with a failure of the storage engine (`LMDBError`) said as a ledger error: the
  /// writes and reads of a `Ledger` throw ledger errors only.
  static func wrappingStorageErrors<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch { throw wrappingStorageError(error) }
  }

  /// `error`, a storage engine failure said as a ledger error.
  static func wrappingStorageError(_ error: any Error) -> any Error {
    guard let error = error as? LMDBError else { return error }
    return LedgerError.storage(error.description)
  }

  /// A file or directory at `path` could not be created, written, moved or removed.
  static func fileSystem(_ message: String, path: String) -> LedgerError {
    LedgerError(.fileSystem, message).with { $0.path = path }
  }

  /// A file given to read cannot be read.
  static func unreadableFile(_ message: String, path: String) -> LedgerError {
    LedgerError(.unreadableFile, message).with { $0.path = path }
  }

  /// A file or directory to write exists already.
  static func destinationExists(_ message: String, path: String) -> LedgerError {
    LedgerError(.destinationExists, message).with { $0.path = path }
  }

  /// An archive that is not a whole log archive.
  static func invalidArchive(_ message: String, path: String) -> LedgerError {
    LedgerError(.invalidArchive, message).with { $0.path = path }
  }

  /// A query that does not fit the model of `entity`.
  static func invalidQuery(entity: String, _ message: String) -> LedgerError {
    LedgerError(.invalidQuery, message).with { $0.entity = entity }
  }

  /// A key that does not name an object of `entity` (a wrong count or type of values).
  static func invalidKey(entity: String, _ message: String) -> LedgerError {
    LedgerError(.invalidKey, message).with { $0.entity = entity }
  }

  /// A batch that cannot be staged as given.
  static func invalidBatch(_ message: String) -> LedgerError {
    LedgerError(.invalidBatch, message)
  }

  /// A caller mistake, described.
  public static func invalidArgument(_ reason: String) -> LedgerError {
    LedgerError(.invalidArgument, reason)
  }

  /// The store was migrated to model version `storeVersion` after this `Ledger` opened it at
  /// `openedVersion`.
  public static func modelChanged(path: String, storeVersion: UInt32, openedVersion: UInt32) -> LedgerError {
    LedgerError(
      .modelChanged,
      "the store at \(path) was migrated to model version \(storeVersion) after this ledger opened it at version \(openedVersion); open the store again"
    ).with {
      $0.path = path
      $0.modelVersion = storeVersion
    }
  }

  /// A migration cannot be derived from the two models: each reason names its place.
  public static func migrationRefused(path: String, reasons: [ModelDifference]) -> LedgerError {
    LedgerError(
      .migrationRefused,
      "the store at \(path) cannot be migrated to the given model; nothing was written:\n" + listed(reasons)
    ).with {
      $0.path = path
      $0.differences = reasons
    }
  }

  /// An upgrade cut short between its two renames: the old store is kept at `keptPath`.
  public static func upgradeInterrupted(path: String, keptPath: String) -> LedgerError {
    LedgerError(
      .upgradeInterrupted,
      "the upgrade of the store at \(path) was cut short after the old store was moved to \(keptPath) and before the new one (in \(path).upgrading) took its place; run the upgrade (`Ledger.upgrade(at:)`) again to finish it"
    ).with { $0.path = path }
  }

  /// Another process changed the store while a lifecycle operation read it.
  public static func storeChanged(path: String, reason: String) -> LedgerError {
    LedgerError(
      .storeChanged,
      "the store at \(path) changed while this operation read it (\(reason)); nothing was written: run it again"
    ).with { $0.path = path }
  }

  /// The `Ledger` was closed (`Ledger.close()`).
  public static func closed(path: String) -> LedgerError {
    LedgerError(.closed, "the ledger of \(path) was closed; open the store again to use it").with { $0.path = path }
  }

  /// A write asked of a ledger opened read-only (`Ledger.Options.readOnly`).
  public static func readOnly(path: String) -> LedgerError {
    LedgerError(.readOnly, "\(path) is open read-only: it takes no writes").with { $0.path = path }
  }

  /// A write to a replica that did not go through its remote.
  public static func replicaWrite(path: String, source: String) -> LedgerError {
    LedgerError(
      .replicaWrite,
      "\(path) is a replica of \(source): its batches are written through the remote log, so that every replica holds the same ones"
    ).with { $0.path = path }
  }

  /// A chunked import stopped at part `failedPart` of `file`: the parts before it are applied
  /// (as `appliedBatches`), that part and the rest are not.
  public static func importStopped(
    file: String,
    failedPart: Int,
    appliedBatches: [UInt64],
    reason: LedgerError
  ) -> LedgerError {
    let applied =
      appliedBatches.isEmpty
      ? "nothing was applied"
      : "parts 1 to \(appliedBatches.count) are applied as batches \(appliedBatches.first ?? 0) to \(appliedBatches.last ?? 0)"
    return LedgerError(
      .importStopped,
      "importing \(file) stopped at part \(failedPart): \(reason)\n\(applied)"
        + "; fix the file and run the same import again with the same idempotency key to apply the rest"
        + " (without one, the parts already applied are applied again)"
    ).with {
      $0.path = file
      $0.failedPart = failedPart
      $0.appliedBatches = appliedBatches
      $0.cause = reason
    }
  }

  /// A revert refused because later batches changed what it would undo.
  public static func revertConflicts(batchID: UInt64, conflicts: [RevertConflict]) -> LedgerError {
    let count = "\(conflicts.count) later change\(conflicts.count == 1 ? "" : "s")"
    let message =
      (["cannot revert batch \(batchID): \(count) conflict (revert with force to override them):"]
      + conflicts.map { "  \($0)" }).joined(separator: "\n")
    return LedgerError(.revertConflicts, message).with {
      $0.batchID = batchID
      $0.conflicts = conflicts
    }
  }

  /// A revert refused because the batch was already reverted.
  public static func alreadyReverted(batchID: UInt64, by later: UInt64) -> LedgerError {
    LedgerError(.alreadyReverted, "batch \(batchID) was already reverted by batch \(later)").with {
      $0.batchID = batchID
      $0.alreadyRevertedBy = later
    }
  }

  private static func listed(_ differences: [ModelDifference]) -> String {
    differences.prefix(50).map { "  \($0)" }.joined(separator: "\n")
      + (differences.count > 50 ? "\n  … and \(differences.count - 50) more" : "")
  }
}
