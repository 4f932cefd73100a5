import JSONLedgerSupport

/// Sizes of a store, from `Ledger.statistics()`.
public struct LedgerStatistics: Sendable, Equatable {
  /// Batches in the log.
  public var batches: UInt64
  /// Live objects by concrete entity, in model order (placeholders included).
  public var objectsByEntity: [(String, Int)]
  /// Of those, the placeholders: objects known only because something refers to them.
  public var placeholdersByEntity: [(String, Int)] = []
  /// Bytes of all encoded change records.
  public var logBytes: Int
  /// Bytes of the LMDB map in use.
  public var usedBytes: Int
  /// The current LMDB map size.
  public var mapSize: Int

  /// Equal counts (sizes in bytes are left out: they vary with page reuse).
  public static func == (lhs: LedgerStatistics, rhs: LedgerStatistics) -> Bool {
    lhs.batches == rhs.batches && lhs.objectsByEntity.map(\.0) == rhs.objectsByEntity.map(\.0)
      && lhs.objectsByEntity.map(\.1) == rhs.objectsByEntity.map(\.1) && lhs.logBytes == rhs.logBytes
  }
}

extension Ledger {
  /// Counts and sizes of the store.
  public func statistics() throws -> LedgerStatistics {
    let info = try LedgerError.wrappingStorageErrors { try environment.info() }
    return try readTransaction { txn in
      var counts: [String: Int] = [:]
      var placeholders: [String: Int] = [:]
      try txn.forEach(in: layout.state, prefix: []) { entry in
        let header: (entity: String, identity: [AttributeValue], since: UInt64)?
        let isPlaceholder: Bool
        do {
          header = try StateCoding.decodeHeader(entry.value, model: model)
          isPlaceholder = try StateCoding.isPlaceholder(entry.value, model: model)
        } catch {
          throw LedgerError.corruptState("object \(UInt64(bigEndianBytes: entry.key)) does not decode: \(error)")
        }
        if let header {
          counts[header.entity, default: 0] += 1
          if isPlaceholder { placeholders[header.entity, default: 0] += 1 }
        }
        return true
      }
      let logBytes = try txn.valueBytes(in: layout.log)
      var statistics = LedgerStatistics(
        batches: try ProjectionStore(transaction: txn, layout: layout, model: model).head(),
        objectsByEntity: model.entities.map { ($0.name, counts[$0.name] ?? 0) },
        logBytes: logBytes, usedBytes: info.usedBytes, mapSize: info.mapSize)
      statistics.placeholdersByEntity = model.entities.compactMap { entity in
        placeholders[entity.name].map { (entity.name, $0) }
      }
      return statistics
    }
  }

  /// `statistics()`, off the caller's executor.
  public func statistics() async throws -> LedgerStatistics {
    try await runBriefly { try self.statistics() }
  }
}
