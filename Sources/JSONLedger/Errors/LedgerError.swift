/// An error from the ledger: a ``Code`` to branch on, a message in the library's words, and
/// the place it concerns as fields, so that a caller (a command-line tool, an HTTP route) can
/// act on it without reading the message.
///
/// Branch on the code, as on GRDB's `DatabaseError.resultCode`:
///
/// ```swift
/// do {
///   try await ledger.apply(batch, expectedHead: head)
/// } catch LedgerError.Code.headMoved {
///   // another writer went first: read again and retry
/// }
/// ```
///
/// Fields that do not apply to a code are `nil` or empty.
public struct LedgerError: Error, Sendable, CustomStringConvertible {
  /// What went wrong, as a value that stays the same when the message's words change.
  public var code: Code
  /// What went wrong and where, in the library's words.
  public var message: String

  /// The store, file or directory the error concerns.
  public var path: String?
  /// The batch the error concerns.
  public var batchID: UInt64?
  /// The entity the error concerns.
  public var entity: String?
  /// The object key the error concerns, as the caller gave it.
  public var key: String?
  /// The log head found (``Code/headMoved``, ``Code/batchNotFound``).
  public var head: UInt64?
  /// The first batch the log holds (``Code/batchArchived``: where compaction left it;
  /// ``Code/batchNotFound``).
  public var firstBatch: UInt64?
  /// The log head the caller expected (``Code/headMoved``).
  public var expectedHead: UInt64?
  /// The names the caller could have meant (``Code/unknownEntity``,
  /// ``Code/unknownCollection``).
  public var known: [String] = []
  /// The model differences (``Code/modelDiffers``, ``Code/migrationRefused``).
  public var differences: [ModelDifference] = []
  /// The later changes that stand in the way of a revert (``Code/revertConflicts``).
  public var conflicts: [RevertConflict] = []
  /// The batch that already reverted ``batchID`` (``Code/alreadyReverted``).
  public var alreadyRevertedBy: UInt64?
  /// The model version the store has now (``Code/modelChanged``).
  public var modelVersion: UInt32?
  /// The store's format version (``Code/unsupportedFormat``, ``Code/upgradeNeeded``).
  public var formatVersion: Int?
  /// Every mapping problem, each with its entity and JSON path (``Code/invalidPayload``).
  public var mapping: MappingError?
  /// Every model problem, each with its place (``Code/invalidModel``).
  public var model: ModelError?
  /// The JSON syntax error, with line and column (``Code/invalidJSON``).
  public var syntax: JSONSyntaxError?
  /// The batches a chunked import applied before it stopped (``Code/importStopped``).
  public var appliedBatches: [UInt64] = []
  /// The part of a chunked import that failed, from 1 (``Code/importStopped``).
  public var failedPart: Int?
  /// Where in the text of a query its error is, in characters from 1 (``Code/invalidQuery``).
  public var position: Int?
  private var causes: [LedgerError] = []

  /// An error with a code and a message; set the fields that apply.
  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  /// The error that stopped a chunked import (``Code/importStopped``).
  public var cause: LedgerError? {
    get { causes.first }
    set { causes = newValue.map { [$0] } ?? [] }
  }

  public var description: String { message }

  /// The same error with `change` applied: the factories below build on it.
  func with(_ change: (inout LedgerError) -> Void) -> LedgerError {
    var copy = self
    change(&copy)
    return copy
  }
}

extension LedgerError {
  /// What went wrong, as a value to branch on: its raw value is stable across releases (it is
  /// what an HTTP response or a log line carries), and new codes can be added without breaking
  /// a `switch` that has a `default`.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// `catch LedgerError.Code.headMoved` matches a ledger error with that code.
    public static func ~= (code: Code, error: any Error) -> Bool {
      (error as? LedgerError)?.code == code
    }
  }
}

extension LedgerError.Code {
  // The store as a whole.
  /// The path has no store (and creating one was not asked for).
  public static let storeNotFound = Self(rawValue: "storeNotFound")
  /// The directory exists but is not a JSONLedger store; nothing was written to it.
  public static let notAStore = Self(rawValue: "notAStore")
  /// The store has a format this library cannot read or upgrade.
  public static let unsupportedFormat = Self(rawValue: "unsupportedFormat")
  /// The store has an earlier format that `Ledger.upgrade(at:)` carries forward.
  public static let upgradeNeeded = Self(rawValue: "upgradeNeeded")
  /// A store already exists where a new one was asked for.
  public static let storeExists = Self(rawValue: "storeExists")
  /// The ledger was closed; open the store again to use it.
  public static let closed = Self(rawValue: "closed")
  /// The store was opened read-only (`Ledger.Options.readOnly`): it takes no writes.
  public static let readOnly = Self(rawValue: "readOnly")
  /// The data file does not hold together: a damaged page.
  public static let damagedFile = Self(rawValue: "damagedFile")
  /// A stored record failed its checksum or does not decode.
  public static let corruptRecord = Self(rawValue: "corruptRecord")
  /// A stored object state, key entry or history does not decode.
  public static let corruptState = Self(rawValue: "corruptState")
  /// The projections disagree with a replay of the log.
  public static let verificationFailed = Self(rawValue: "verificationFailed")
  /// The storage engine failed.
  public static let storage = Self(rawValue: "storage")
  /// A file or directory could not be created, written, moved or removed.
  public static let fileSystem = Self(rawValue: "fileSystem")
  /// A file given to read cannot be read.
  public static let unreadableFile = Self(rawValue: "unreadableFile")
  /// A file or directory to write already exists.
  public static let destinationExists = Self(rawValue: "destinationExists")
  /// Two keys too long to store whole share a hash.
  public static let keyCollision = Self(rawValue: "keyCollision")

  // Models and migrations.
  /// The model is invalid, or does not fit the store.
  public static let invalidModel = Self(rawValue: "invalidModel")
  /// The store was opened with a model that differs from its own.
  public static let modelDiffers = Self(rawValue: "modelDiffers")
  /// The store was migrated after this ledger opened it.
  public static let modelChanged = Self(rawValue: "modelChanged")
  /// A migration cannot be derived from the two models.
  public static let migrationRefused = Self(rawValue: "migrationRefused")
  /// An upgrade was cut short between its two renames; running it again finishes it.
  public static let upgradeInterrupted = Self(rawValue: "upgradeInterrupted")
  /// Another process changed the store while an operation read it; nothing was written.
  public static let storeChanged = Self(rawValue: "storeChanged")

  // Writing.
  /// Malformed JSON.
  public static let invalidJSON = Self(rawValue: "invalidJSON")
  /// The payload cannot be mapped to the model (every problem is in `mapping`).
  public static let invalidPayload = Self(rawValue: "invalidPayload")
  /// A batch cannot be staged as given (its shape, its parent scope).
  public static let invalidBatch = Self(rawValue: "invalidBatch")
  /// A top-level collection key that names no entity.
  public static let unknownCollection = Self(rawValue: "unknownCollection")
  /// An operation that works in parts was asked to stop between two (``Code/importStopped``
  /// names it as the cause).
  public static let stopRequested = Self(rawValue: "stopRequested")
  /// The payload is an envelope around its items, and where they are was not said.
  public static let envelope = Self(rawValue: "envelope")
  /// The head moved past the batch id the caller expected.
  public static let headMoved = Self(rawValue: "headMoved")
  /// A chunked import stopped part-way: `appliedBatches` are applied, the rest is not.
  public static let importStopped = Self(rawValue: "importStopped")
  /// A write to a replica that did not go through its remote.
  public static let replicaWrite = Self(rawValue: "replicaWrite")
  /// A value transformer failed on a value.
  public static let transformerFailed = Self(rawValue: "transformerFailed")
  /// A revert refused: later batches changed what it would undo (`conflicts`).
  public static let revertConflicts = Self(rawValue: "revertConflicts")
  /// A revert refused: the batch was already reverted (`alreadyRevertedBy`).
  public static let alreadyReverted = Self(rawValue: "alreadyReverted")

  // Reading.
  /// An entity name the model does not have.
  public static let unknownEntity = Self(rawValue: "unknownEntity")
  /// No object of `entity` has `key`.
  public static let objectNotFound = Self(rawValue: "objectNotFound")
  /// A batch id outside the log.
  public static let batchNotFound = Self(rawValue: "batchNotFound")
  /// A batch before the log's first batch: compact moved it to an archive.
  public static let batchArchived = Self(rawValue: "batchArchived")
  /// A query that does not fit the model (an unknown attribute, a value of the wrong type).
  public static let invalidQuery = Self(rawValue: "invalidQuery")
  /// A key that does not fit the entity's identity (a wrong count or type of values).
  public static let invalidKey = Self(rawValue: "invalidKey")
  /// Stored objects that do not decode as the Swift type asked for.
  public static let decodingFailed = Self(rawValue: "decodingFailed")
  /// An archive that is not a whole log archive.
  public static let invalidArchive = Self(rawValue: "invalidArchive")

  /// A caller mistake in an argument, described.
  public static let invalidArgument = Self(rawValue: "invalidArgument")
}
