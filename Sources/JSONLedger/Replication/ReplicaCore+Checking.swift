public import Foundation

extension ReplicaCore {
  // MARK: - Compacting

  /// Compacts the store (`Ledger.compact(keepingBatches:before:archive:discarding:)`) and
  /// publishes its checkpoint as a snapshot, from which new replicas start (`clone`). The
  /// remote's log is not pruned: it keeps every batch, and other replicas are not affected.
  /// Run again, it publishes the store's checkpoint if an earlier run could not.
  public func compact(
    keepingBatches count: Int?, before date: Date?, archive: String?, discarding: Bool
  ) async throws -> CompactReport {
    let ledger = self.ledger
    let log = self.log
    let report = try await Self.blocking {
      try ledger.compactReplica(
        keepingBatches: count, before: date, archive: archive, discarding: discarding, digest: log.digest(of:))
    }
    try await publishSnapshot()
    return report
  }

  /// Publishes the checkpoint the store's log starts at, when it starts at one, once the
  /// remote's record of that batch is found to be the one the checkpoint stands for.
  public func publishSnapshot() async throws {
    let ledger = self.ledger
    let start = try ledger.logExtent().firstBatch
    guard start > 1 else { return }
    let digest = try remoteDigest(ofLocal: start)
    let snapshot = RemoteSnapshot(
      batchID: start, modelVersion: ledger.modelVersion, logDigest: digest, bytes: try ledger.encodedRecord(start),
      writer: Self.thisWriter)
    try await log.withSession { session in
      let remote = try await session.digest(ofBatch: start)
      guard remote == digest else {
        throw RemoteError.diverged(batch: start, local: Self.hex(digest), remote: remote.map(Self.hex) ?? "none")
      }
      try await session.publish(snapshot)
    }
  }

  // MARK: - Status

  /// The local head, the remote head, and the lag between them.
  public func status() async throws -> ReplicaStatus {
    try await log.withSession { session in
      let head = try await session.head()
      return ReplicaStatus(
        localHead: try ledger.logExtent().head, remoteHead: head.batchID, remoteUpdated: head.updatedAt,
        remoteBytes: try await session.storedBytes())
    }
  }

  /// Checks that the remote's log chains (each record's previous digest the one before's) and
  /// that every record the replica holds is the remote's, byte for byte by digest; then
  /// verifies the store itself. Throws `RemoteError.diverged` or `.corruptRecord` naming the
  /// first batch that differs.
  public func verifyAgainstRemote() async throws -> ReplicaVerification {
    // Every record's bytes are read and checked, not only the digests the log gives: a
    // damaged record whose digest column still holds the old digest is found.
    let (digests, remoteHead) = try await log.withSession { session in
      var digests: [[UInt8]] = []
      var previous = log.genesisDigest
      while true {
        let records = try await session.records(after: UInt64(digests.count), limit: 256)
        if records.isEmpty { break }
        for record in records {
          guard record.batchID == UInt64(digests.count) + 1, record.previousDigest == previous else {
            throw RemoteError.corruptRecord(batch: record.batchID, reason: "the remote's chain breaks there")
          }
          try check(record)
          digests.append(record.digest)
          previous = record.digest
        }
      }
      return (digests, try await session.head().batchID)
    }
    let remoteEnd = UInt64(digests.count)
    guard remoteHead == remoteEnd else {
      throw RemoteError.corruptRecord(
        batch: remoteEnd + 1,
        reason: "the remote's head row says batch \(remoteHead), but its log ends at batch \(remoteEnd)")
    }
    let (first, head) = try ledger.logExtent()
    guard head <= remoteEnd else {
      throw RemoteError.diverged(
        batch: remoteEnd + 1, local: "present", remote: "none (the remote's head is \(remoteEnd))")
    }
    if head > 0 {
      // A compacted replica's log starts at a checkpoint: from there on.
      for batch in first...head {
        let local = try remoteDigest(ofLocal: batch)
        let remote = digests[Int(batch) - 1]
        guard local == remote else {
          throw RemoteError.diverged(batch: batch, local: Self.hex(local), remote: Self.hex(remote))
        }
      }
    }
    _ = try await ledger.verify()
    return ReplicaVerification(batches: head, remoteHead: remoteEnd)
  }
}

/// Where a replica stands against its remote.
public struct ReplicaStatus: Sendable, Equatable {
  public var localHead: UInt64
  public var remoteHead: UInt64
  /// Batches the replica has yet to apply.
  public var lag: UInt64 { remoteHead > localHead ? remoteHead - localHead : 0 }
  /// When the remote's head last moved.
  public var remoteUpdated: Date
  /// The bytes the ledger's log takes on the remote, as the remote stores them.
  public var remoteBytes: Int64

  public init(localHead: UInt64, remoteHead: UInt64, remoteUpdated: Date, remoteBytes: Int64) {
    self.localHead = localHead
    self.remoteHead = remoteHead
    self.remoteUpdated = remoteUpdated
    self.remoteBytes = remoteBytes
  }
}

/// What `verifyAgainstRemote` found.
public struct ReplicaVerification: Sendable, Equatable {
  /// The batches compared, local against remote.
  public var batches: UInt64
  /// The remote's head.
  public var remoteHead: UInt64

  public init(batches: UInt64, remoteHead: UInt64) {
    self.batches = batches
    self.remoteHead = remoteHead
  }
}
