import Foundation
import LMDB

extension Ledger {
  /// The one way a new record enters the log: it takes the next batch id (head + 1), the
  /// time now and the model version it is written under, is folded into the projections and
  /// encoded change by change as it is, and appended with `MDB_APPEND`, all in the caller's
  /// write transaction.
  /// Apply, revert, rewind and migrate write through here; replays (upgrade, restore-log)
  /// through `append(_:_:knownStates:encoded:under:)`. Compact's checkpoint, which replaces
  /// records instead of following them, is the one other writer of the log. Once the
  /// transaction commits, the write engine (`perform`) announces the record: logged and
  /// published on `changes`.
  ///
  /// - Parameters:
  ///   - knownStates: the state of each changed object after the record, in the order of its
  ///     changes, when the caller has them (the projector reads them otherwise).
  ///   - versions: the model versions the record is written under: the ledger's, or the next
  ///     ones a migration has just written.
  /// - Returns: the summary of the record. The changes themselves are consumed: the projector
  ///   lets each go once it is folded, so a large batch's changes shrink as the transaction's
  ///   pages grow, and the two never peak together.
  func appendNew(
    kind: ChangeRecord.Kind, metadata: ChangeRecord.Metadata, statistics: ChangeRecord.Statistics,
    changes: consuming [ObjectChange], _ txn: Transaction, knownStates: consuming [ObjectState?]? = nil,
    under versions: ModelVersions? = nil
  ) throws -> BatchSummary {
    let versions = versions ?? self.versions
    let head = try ProjectionStore(transaction: txn, layout: layout, model: versions.model).head()
    let record = ChangeRecord(
      batchID: head + 1, time: Date(), kind: kind, metadata: metadata, statistics: statistics, changes: changes,
      modelVersion: versions.current)
    let summary = BatchSummary(record: record)
    try append(consume record, txn, knownStates: knownStates, under: versions, isNew: true)
    return summary
  }

  /// Appends a record already made elsewhere (an upgrade's, an archive's, another store's),
  /// whose batch id must follow the log's head (or, in an empty log, be where it starts).
  /// `encoded`, when given, is written to the log as it is, after its checksum and the batch id
  /// it claims are checked: a record kept as it was written, under the model version it names;
  /// `record` is what it says in the current model's terms, which the projections take.
  func append(
    _ record: consuming ChangeRecord, _ txn: Transaction, knownStates: consuming [ObjectState?]? = nil,
    encoded: [UInt8]? = nil, under versions: ModelVersions? = nil, isNew: Bool = false
  ) throws {
    let versions = versions ?? self.versions
    try checkModelVersion(txn, versions)
    // An empty log restored from an archive starts at the archive's first batch (a checkpoint).
    let extent = try ProjectionStore(transaction: txn, layout: layout, model: versions.model).extent()
    guard record.batchID == (extent.head == 0 ? extent.firstBatch : extent.head + 1) else {
      throw LedgerError.corruptRecord(
        batchID: record.batchID, reason: "it does not follow the head of the log (batch \(extent.head))")
    }
    record.modelVersion = versions.current
    var bytes: EncodedRecord
    let batchID = record.batchID
    // What the gate below is told of a new record: its header, without its changes.
    var header: ChangeRecord?
    if isNew {
      header = record
      header?.changes = []
    }
    let projector = Projector(transaction: txn, layout: layout, model: versions.model)
    if let encoded {
      let claimed: UInt64
      do { claimed = try RecordCoding.batchID(ofEncoded: encoded) } catch {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "its bytes do not read: \(error)")
      }
      guard claimed == batchID else {
        throw LedgerError.corruptRecord(batchID: batchID, reason: "its bytes claim batch \(claimed)")
      }
      bytes = EncodedRecord(encoded: encoded)
      try projector.apply(consume record, knownStates: knownStates)
    } else {
      // Encoded as it is folded, each change while the projector has it at hand: so a new
      // record lists its changes in ascending object id order.
      var encoder = RecordEncoder(header: record)
      try projector.apply(consume record, knownStates: knownStates) { change in encoder.append(change) }
      bytes = encoder.finish()
    }
    // A new record of a replica goes to its remote (`recordGate`) before the transaction
    // commits, which it does only when the remote took it: the gate is last, once every page
    // of the transaction is written, so that a full map (which runs the write again) never
    // follows a record the remote took. It needs the record's bytes whole.
    let gate = header == nil ? nil : try recordGate(txn)
    let outgoing = gate == nil ? nil : bytes.joined
    // The log takes the record after the projections, in the same transaction: by then the
    // projector has let the changes go, and the parts go as they are copied into the log's
    // room, so a large record is never held twice nor beside its changes (but for a gate).
    // Batch ids are big-endian and always head + 1, so MDB_APPEND's ordering holds.
    try txn.put(reserving: bytes.count, forKey: StoreKeys.batch(batchID), in: layout.log, flags: .append) { room in
      bytes.drain(into: room)
    }
    if let gate, let header, let outgoing {
      try gate(
        OutgoingRecord(
          batchID: header.batchID, kind: header.kind, modelVersion: header.modelVersion,
          idempotencyKey: header.metadata.idempotencyKey, bytes: outgoing,
          modelDefinition: header.kind == .migration ? versions.jsonValue : nil))
    }
  }

  /// Appends records another store of the same model wrote, in order, as their bytes
  /// (`record(_:)`'s stored form), in one transaction: each checked against its checksum, its
  /// batch id the head + 1, written as it is and folded into the projections; all of them or,
  /// on an error, none; each announced once committed. The path a replica takes for the
  /// records its leader wrote.
  /// A replica catching up on several records commits (and flushes) once for them all. They
  /// are records its remote holds: the commit leaves the meta page unflushed
  /// (`Write.flushesMeta`).
  func appendEncoded(_ records: [[UInt8]]) throws -> [BatchSummary] {
    let claimed = try records.map { try Self.batchID(ofRecord: $0) }
    return try perform {
      var write = Write(room: .objects(Self.roomObjects(ofEncoded: records)), announcingEach: \.self) { [self] txn in
        try appendEncoded(records, claimed: claimed, txn)
      }
      write.flushesMeta = false
      return write
    }
  }

  /// `appendEncoded(_:)`'s steps in the caller's transaction: records whose bytes claim the
  /// batch ids `claimed`. Returns their summaries, which the caller announces once it commits.
  func appendEncoded(_ records: [[UInt8]], claimed: [UInt64], _ txn: Transaction) throws -> [BatchSummary] {
    try zip(records, claimed).map { bytes, claimed in
      let record = try Self.decodeRecord(bytes, batchID: claimed, versions: versions, identities: identities(txn))
      // The same record arriving twice (a follower and a writer of one process) is a
      // no-op; another record under a batch id the log holds is not.
      if let stored = try txn.value(forKey: StoreKeys.batch(claimed), in: layout.log) {
        guard stored.elementsEqual(bytes) else {
          throw LedgerError.corruptRecord(batchID: claimed, reason: "the log holds another record of that batch")
        }
        return BatchSummary(record: record, wasAlreadyApplied: true)
      }
      try append(record, txn, encoded: bytes)
      return BatchSummary(record: record)
    }
  }

  /// Room for encoded records' changes: about one object each for every 64 bytes of them.
  static func roomObjects(ofEncoded records: [[UInt8]]) -> Int {
    records.reduce(0) { $0 + $1.count } / 64
  }
}
