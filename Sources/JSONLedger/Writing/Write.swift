import LMDB

/// One write to a ledger's store, as the write engine (`Ledger.perform(_:)`) runs it: a value
/// that says what to do, which the engine wraps in the same steps every time.
///
/// Import, revert, rewind, migrate, compact's checkpoint, the replica paths and the store's
/// local values each make one; the engine owns the rest: the queue, the read-only refusal, the
/// room reserved in the map, the one LMDB write transaction, the model-version check, and the
/// announcement (log line and `changes`) of the record the write appended once it commits.
struct Write<Outcome> {
  /// The map room reserved before the transaction begins: a write that fills the map is
  /// aborted and run again after growing it, so too little only costs the work twice.
  var room: WriteRoom
  /// Whether the transaction first checks that the store's model version is still the one
  /// this ledger opened (`LedgerError.modelChanged`). Off only for what is not in the model's
  /// terms: the replica mark, the local values.
  var checksModelVersion = true
  /// An idempotency key the write's record would carry: refused before any work when empty.
  var idempotencyKey: String?
  /// What the write does, in the transaction. It may run more than once (after the map
  /// grew; alone, after the group it ran in failed to commit), so it has no effect outside the
  /// transaction but a replica's gate, which `append` calls last (and a write through a gate
  /// joins no group).
  var body: (Transaction) throws -> Outcome
  /// The summaries of the records the write appended, which the engine announces in order
  /// once the transaction committed; nil for a write that appends no record.
  var announced: ((Outcome) -> [BatchSummary])?
  /// Whether the commit flushes the meta page (as the store's durability says). Off for the
  /// records a replica takes from its remote, which holds them, and (the engine sees to it)
  /// for a write through the remote, whose record the remote took before the commit: a
  /// machine crash may undo that commit (the next catch-up fetches the records again) but
  /// never breaks the store, and the commit makes one synchronous write fewer.
  var flushesMeta = true
  /// Local values (`Ledger.setLocalValues(_:)`, their stored keys) the engine keeps in the same
  /// transaction, before the body: kept with what the write does, or, when it fails, not.
  var localValues: [(key: [UInt8], value: [UInt8]?)] = []

  init(
    room: WriteRoom, checksModelVersion: Bool = true, idempotencyKey: String? = nil,
    announcing announced: KeyPath<Outcome, BatchSummary>? = nil,
    _ body: @escaping (Transaction) throws -> Outcome
  ) {
    self.room = room
    self.checksModelVersion = checksModelVersion
    self.idempotencyKey = idempotencyKey
    self.announced = announced.map { path in { [$0[keyPath: path]] } }
    self.body = body
  }

  /// A write that appends several records, each announced.
  init(
    room: WriteRoom, announcingEach announced: KeyPath<Outcome, [BatchSummary]>,
    _ body: @escaping (Transaction) throws -> Outcome
  ) {
    self.init(room: room, body)
    self.announced = { $0[keyPath: announced] }
  }
}

/// The map room a write reserves before its transaction.
enum WriteRoom: Sendable {
  /// For a record of about this many changed objects, its projections and the pages copied
  /// on write (`Ledger.estimatedBytes(objects:)`).
  case objects(Int)
  /// For every page of the store written anew beside the old ones (a replay, a rebuild),
  /// which stay until the commit.
  case wholeStore
  /// This many bytes.
  case bytes(Int)
}
