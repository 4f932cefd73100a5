import Foundation
import JSONLedgerSupport
import LMDB

/// What `Ledger.backup(to:allowingDamaged:)` wrote.
public struct BackupReport: Sendable, Equatable {
  /// The directory of the copy.
  public var path: String
  /// The first batch the copy's log holds (1, or the checkpoint `compact` left).
  public var firstBatch: UInt64
  /// The last batch the copy holds.
  public var head: UInt64
  /// The size of the copy's `data.mdb`.
  public var bytes: Int
  /// Why the copy fails verification, when it was written all the same (`allowingDamaged`);
  /// nil for a copy that verifies.
  public var damage: String?
}

extension Ledger {
  /// Writes a consistent, compacted copy of the store to `destination`, a directory that does
  /// not exist yet or is empty (and is not inside the store): the store as of one moment (a
  /// read transaction), while writers go on. The copy is a store of its own, which opens and
  /// verifies; free pages are left out.
  ///
  /// The copy is verified (`verify()`: every record's checksum, and a replay compared with its
  /// projections) before this returns, so that rotating backups never replaces a good copy
  /// with a damaged one: a copy that fails is removed and the failure thrown, unless
  /// `allowingDamaged` is true, when it is kept and the report's `damage` says why.
  public func backup(to destination: String, allowingDamaged: Bool = false) throws -> BackupReport {
    let destination = BuildDirectory.normalized(destination)
    let store = Self.resolvedPath(path)
    let resolvedDestination = Self.resolvedPath(destination)
    guard resolvedDestination != store, !resolvedDestination.hasPrefix(store + "/") else {
      throw LedgerError.invalidArgument(
        "\(destination) is inside the store \(path): a backup there would be lost with the store; back up to a directory outside it"
      )
    }
    var isDirectory: ObjCBool = false
    var created = false
    if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory) {
      guard isDirectory.boolValue, (try? FileManager.default.contentsOfDirectory(atPath: destination))?.isEmpty == true
      else {
        throw LedgerError.destinationExists(
          "\(destination) exists and is not an empty directory: back up to a new one", path: destination)
      }
    } else {
      try Self.makeDirectory(destination)
      created = true
    }
    func removeCopy() {
      for name in ["data.mdb", "lock.mdb"] { try? FileManager.default.removeItem(atPath: destination + "/" + name) }
      if created { rmdir(destination) }
    }
    do {
      try environment.copy(to: destination, compacting: true)
    } catch {
      removeCopy()
      throw LedgerError.fileSystem(
        "cannot back up \(path) to \(destination): \(SystemError.describe(error))", path: destination)
    }
    let copy = destination + "/data.mdb"
    chmod(copy, 0o600)
    let bytes = (try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0
    // The copy checked as a store of its own; its extent read from it.
    var report = BackupReport(path: destination, firstBatch: 1, head: 0, bytes: bytes, damage: nil)
    do {
      let copied = try Ledger.open(at: destination, options: Options())
      defer { copied.close() }
      let extent = try copied.environment.read { txn in
        try ProjectionStore(transaction: txn, layout: copied.layout, model: copied.model).extent()
      }
      (report.firstBatch, report.head) = (extent.firstBatch, extent.head)
      _ = try copied.verify()
    } catch {
      guard allowingDamaged else {
        removeCopy()
        throw LedgerError.verificationFailed(
          "the copy of \(path) does not verify, so no backup was written: \(SystemError.describe(error))")
      }
      report.damage = SystemError.describe(error)
      logger.warning("wrote a damaged backup", metadata: ["store": "\(path)", "damage": "\(report.damage ?? "")"])
    }
    return report
  }

  /// `backup(to:allowingDamaged:)`, off the caller's executor.
  public func backup(to destination: String, allowingDamaged: Bool = false) async throws -> BackupReport {
    // It copies the whole store: a thread of its own.
    try await runBlocking("JSONLedger.backup") { try self.backup(to: destination, allowingDamaged: allowingDamaged) }
  }

  /// `path` with symbolic links resolved as far as it exists, the rest appended: where a
  /// directory that does not exist yet would be.
  static func resolvedPath(_ path: String) -> String {
    var existing = BuildDirectory.normalized(path)
    var rest: [String] = []
    while existing != "/" {
      if let resolved = realpath(existing, nil) {
        defer { free(resolved) }
        return ([String(cString: resolved)] + rest.reversed()).joined(separator: "/")
      }
      rest.append((existing as NSString).lastPathComponent)
      existing = BuildDirectory.parent(of: existing)
    }
    return "/" + rest.reversed().joined(separator: "/")
  }
}
