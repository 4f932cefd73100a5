import Foundation
import LMDB

/// What `Ledger.backup(to:)` wrote.
public struct BackupReport: Sendable, Equatable {
  /// The directory of the copy.
  public var path: String
  /// The last batch the copy holds.
  public var head: UInt64
  /// The size of the copy's `data.mdb`.
  public var bytes: Int
}

extension Ledger {
  /// Writes a consistent, compacted copy of the store to `destination`, a directory that does
  /// not exist yet or is empty: the store as of one moment (a read transaction), while writers
  /// go on. The copy is a store of its own, which opens and verifies; free pages are left out.
  public func backup(to destination: String) throws -> BackupReport {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory) {
      guard isDirectory.boolValue, (try? FileManager.default.contentsOfDirectory(atPath: destination))?.isEmpty == true
      else {
        throw LedgerError.invalidArgument("\(destination) exists and is not an empty directory: back up to a new one")
      }
    } else {
      try Self.makeDirectory(destination)
    }
    do {
      try environment.copy(to: destination, compacting: true)
    } catch {
      try? FileManager.default.removeItem(atPath: destination + "/data.mdb")
      throw LedgerError.storage("cannot back up \(path) to \(destination): \(error)")
    }
    let copy = destination + "/data.mdb"
    chmod(copy, 0o600)
    let bytes = (try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0
    // The batch the copy ends at, read from the copy itself.
    let copied = try Environment.shared(path: destination)
    let meta = try copied.database(named: "meta")
    let head = try copied.read { txn in try txn.value(forKey: MetaKey.head, in: meta) }.map {
      UInt64(bigEndianBytes: $0)
    }
    return BackupReport(path: destination, head: head ?? 0, bytes: bytes)
  }

  /// `backup(to:)`, off the caller's executor.
  public func backup(to destination: String) async throws -> BackupReport {
    try await offTheCaller { try self.backup(to: destination) }
  }
}
