/// An error from the ledger, with the context a user needs to fix it.
public enum LedgerError: Error, Sendable, CustomStringConvertible {
  /// The path has no store (and creating one was not asked for).
  case storeNotFound(path: String)
  /// The directory exists but is not a JSONLedger store; nothing was written to it.
  case notAStore(path: String, reason: String)
  /// The store was written by a library with another store format (newer, or an earlier
  /// one this library no longer reads).
  case unsupportedFormat(path: String, found: Int, supported: Int)
  /// A store already exists where a new one was asked for.
  case storeExists(path: String)
  /// The model is invalid, or does not fit the store.
  case model(ModelError)
  /// The store was opened with a model that differs from its own (each difference named):
  /// migrate it, or open it with `migration: .automatic`.
  case modelDiffers(path: String, differences: [ModelDifference])
  /// The payload cannot be mapped (every bad object is listed).
  case mapping(MappingError)
  /// Malformed JSON (line and column).
  case syntax(JSONSyntaxError, source: String?)
  /// An entity name the model does not have.
  case unknownEntity(String, known: [String])
  /// A top-level collection key that names no entity.
  case unknownCollection(String, known: [String])
  /// No object of `entity` has `key`.
  case objectNotFound(entity: String, key: String)
  /// A batch id outside the log, which holds batches `first` to `head` (0 to 0 when empty).
  case batchNotFound(UInt64, first: UInt64, head: UInt64)
  /// A batch before the log's horizon: `compact` moved it to an archive.
  case batchArchived(UInt64, horizon: UInt64)
  /// A stored record failed its checksum or does not decode.
  case corruptRecord(batchID: UInt64, reason: String)
  /// The projections disagree with a replay of the log.
  case verificationFailed(String)
  /// The store's data file does not hold together (`Ledger.checkPages()`): a damaged page.
  case damagedFile(path: String, reason: String)
  /// The head moved past the batch id the caller expected (optimistic concurrency).
  case headMoved(expected: UInt64, actual: UInt64)
  /// The storage engine failed.
  case storage(String)
  /// A caller mistake, described.
  case invalidArgument(String)
  /// The store was migrated to model version `storeVersion` after this `Ledger` opened it
  /// at `openedVersion`: open the store again.
  case modelChanged(path: String, storeVersion: UInt32, openedVersion: UInt32)
  /// A migration cannot be derived from the two models: each reason names its place; nothing
  /// was written.
  case migrationRefused(path: String, reasons: [ModelDifference])
  /// An upgrade of the store was cut short between its two renames: the old store is kept at
  /// `keptPath`, the new one is whole beside it; running the upgrade again finishes it.
  case upgradeInterrupted(path: String, keptPath: String)
  /// Another process changed the store while a lifecycle operation (compact) was reading it;
  /// nothing was written: run the operation again.
  case storeChanged(path: String, reason: String)
  /// The `Ledger` was closed (`Ledger.close()`); open the store again to use it.
  case closed(path: String)
  /// A chunked import stopped at part `failedPart` of `file`: the parts before it are
  /// applied (as `appliedBatches`), that part and the rest are not.
  /// A write to a replica that did not go through its remote: a replica's records are
  /// written where its log lives, so that every replica holds the same ones.
  case replicaWrite(path: String, source: String)
  indirect case importStopped(file: String, failedPart: Int, appliedBatches: [UInt64], reason: LedgerError)

  public var description: String {
    switch self {
    case .storeNotFound(let path): "no store at \(path) (open it with a model to create one)"
    case .notAStore(let path, let reason): "\(path) is not a JSONLedger store: \(reason)"
    case .unsupportedFormat(let path, let found, let supported) where found > supported:
      "the store at \(path) has format version \(found), newer than this library supports (\(supported)); use a newer JSONLedger"
    case .unsupportedFormat(let path, let found, let supported) where found >= Int(StoreFormat.oldestUpgradable):
      "the store at \(path) has format version \(found), written by an earlier JSONLedger; this library reads format \(supported): upgrade it (`Ledger.upgrade(at:)`) to replay its log into format \(supported)"
    case .unsupportedFormat(let path, let found, let supported):
      "the store at \(path) has format version \(found), older than any this library upgrades (\(StoreFormat.oldestUpgradable)); it reads format \(supported) only: export the data with the earlier version and import it into a new store"
    case .storeExists(let path): "a store already exists at \(path)"
    case .model(let error): error.description
    case .modelDiffers(let path, let differences):
      "the given model differs from the model of the store at \(path) (\(differences.count) difference\(differences.count == 1 ? "" : "s")); migrate the store (`Ledger.migrate(at:to:)`, or open it with `migration: .automatic`):\n"
        + differences.prefix(50).map { "  \($0)" }.joined(separator: "\n")
        + (differences.count > 50 ? "\n  … and \(differences.count - 50) more" : "")
    case .mapping(let error): error.description
    case .syntax(let error, let source): source.map { "\($0): \(error)" } ?? error.description
    case .unknownEntity(let name, let known):
      if let match = known.first(where: { $0.lowercased() == name.lowercased() }) {
        "unknown entity \"\(name)\": did you mean \(match)? (entity names are case-sensitive)"
      } else {
        "unknown entity \"\(name)\" (the model has: \(known.joined(separator: ", ")))"
      }
    case .unknownCollection(let key, let known):
      "unknown collection \"\(key)\" (known: \(known.joined(separator: ", ")))"
    case .objectNotFound(let entity, let key): "no \(entity) with key \(key)"
    case .batchArchived(let id, let horizon):
      "batch \(id) was archived by compact: the log starts at batch \(horizon) (a checkpoint of the state then); restore the archive into a new store (`Ledger.restoreLog(from:to:)`) to read it"
    case .batchNotFound(let id, let first, let head):
      head == 0
        ? "batch \(id) does not exist: the log is empty"
        : "batch \(id) does not exist (the log holds batches \(first) to \(head))"
    case .corruptRecord(let id, let reason): "the record of batch \(id) is corrupt: \(reason)"
    case .verificationFailed(let reason): "verification failed: \(reason)"
    case .damagedFile(let path, let reason):
      "the data file of the store at \(path) is damaged (\(reason)); restore it from a backup"
    case .headMoved(let expected, let actual):
      "the log head moved: expected batch \(expected), found \(actual) (another writer applied a batch first)"
    case .storage(let reason): "storage error: \(reason)"
    case .invalidArgument(let reason): reason
    case .modelChanged(let path, let storeVersion, let openedVersion):
      "the store at \(path) was migrated to model version \(storeVersion) after this ledger opened it at version \(openedVersion); open the store again"
    case .migrationRefused(let path, let reasons):
      "the store at \(path) cannot be migrated to the given model; nothing was written:\n"
        + reasons.prefix(50).map { "  \($0)" }.joined(separator: "\n")
        + (reasons.count > 50 ? "\n  … and \(reasons.count - 50) more" : "")
    case .upgradeInterrupted(let path, let kept):
      "the upgrade of the store at \(path) was cut short after the old store was moved to \(kept) and before the new one (in \(path).upgrading) took its place; run the upgrade (`Ledger.upgrade(at:)`) again to finish it"
    case .storeChanged(let path, let reason):
      "the store at \(path) changed while this operation read it (\(reason)); nothing was written: run it again"
    case .closed(let path): "the ledger of \(path) was closed; open the store again to use it"
    case .replicaWrite(let path, let source):
      "\(path) is a replica of \(source): its batches are written through the remote log, so that every replica holds the same ones"
    case .importStopped(let file, let part, let applied, let reason):
      "importing \(file) stopped at part \(part): \(reason)\n"
        + (applied.isEmpty
          ? "nothing was applied"
          : "parts 1 to \(applied.count) are applied as batches \(applied.first ?? 0) to \(applied.last ?? 0)")
        + "; fix the file and run the same import again with the same idempotency key to apply the rest"
        + " (without one, the parts already applied are applied again)"
    }
  }
}
